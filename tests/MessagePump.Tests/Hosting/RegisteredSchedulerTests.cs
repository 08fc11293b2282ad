using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.Hosting;
using PriorityAsync.MessagePump.Tests.Pump;

namespace PriorityAsync.MessagePump.Tests.Hosting;

/// <summary>
/// The hosted pump runs on the scheduler the user registered, however they wrote the registration (a scheduler
/// registered under its own type, PriorityTaskScheduler, is used, not ignored without a word), and a container that
/// holds two different schedulers fails the host's start saying what to register.
/// </summary>
public class RegisteredSchedulerTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(30);

    public static TheoryData<string> Registrations => new()
    {
        "AddSingleton(new PriorityTaskScheduler(...))",
        "AddSingleton<PriorityScheduler>(new PriorityTaskScheduler(...))",
        "AddSingleton(provider => new PriorityTaskScheduler(...))",
        "AddSingleton<PriorityScheduler>(provider => new PriorityTaskScheduler(...))",
        "the same instance under both types",
    };

    [Theory]
    [MemberData(nameof(Registrations))]
    public async Task HostedPump_RunsItsHandlersOnTheRegisteredScheduler(string registration)
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { Name = "mine", WorkerCount = 1 });
        var builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        Register(builder.Services, registration, scheduler);
        var (queue, ranOn) = AddPump(builder.Services);
        using var host = builder.Build();

        await host.StartAsync();
        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 3, TimeProvider.System, Limit, TimeSpan.FromMilliseconds(10));
        await host.StopAsync();

        host.Services.GetRequiredKeyedService<MessagePumpHostedService>("orders").Pump.Scheduler.Should().BeSameAs(scheduler);
        ranOn.Should().HaveCount(3).And.OnlyContain(s => ReferenceEquals(s, scheduler));
    }

    [Fact]
    public async Task AddPriorityScheduler_RegistersOneSchedulerUnderBothTypes_WithItsOptions_AndThePumpRunsOnIt()
    {
        var builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Services.AddPriorityScheduler(options =>
        {
            options.Name = "consumer";
            options.WorkerCount = 2;
            options.ReservedWorkerCount = 2;
        });
        var (queue, ranOn) = AddPump(builder.Services);
        PriorityTaskScheduler scheduler;
        using (var host = builder.Build())
        {
            scheduler = host.Services.GetRequiredService<PriorityTaskScheduler>();
            host.Services.GetRequiredService<PriorityScheduler>().Should().BeSameAs(scheduler);
            scheduler.Name.Should().Be("consumer");
            scheduler.WorkerCount.Should().Be(2);
            scheduler.ReservedWorkerCount.Should().Be(2);

            await host.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 3, TimeProvider.System, Limit, TimeSpan.FromMilliseconds(10));
            await host.StopAsync();
            ranOn.Should().HaveCount(3).And.OnlyContain(s => ReferenceEquals(s, scheduler));
        }

        scheduler.Completion.IsCompleted.Should().BeTrue("the container created the scheduler, so it disposes it");
    }

    [Fact]
    public async Task TwoDifferentSchedulers_FailTheHostsStart_SayingWhatToRegister()
    {
        await using var first = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { Name = "first", WorkerCount = 1 });
        await using var second = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { Name = "second", WorkerCount = 1 });
        var builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Services.AddSingleton<PriorityScheduler>(first);
        builder.Services.AddSingleton(second);
        AddPump(builder.Services);
        using var host = builder.Build();

        var failure = await host.Invoking(h => h.StartAsync()).Should().ThrowAsync<InvalidOperationException>();

        failure.Which.Message.Should().Contain("Message pump 'orders'")
            .And.Contain("'first'").And.Contain("'second'")
            .And.Contain("services.AddPriorityScheduler(");
    }

    [Fact]
    public void AddPriorityScheduler_AfterAnotherScheduler_ThrowsNamingServices()
    {
        var services = new ServiceCollection();
        services.AddSingleton(_ => new PriorityTaskScheduler());

        services.Invoking(s => s.AddPriorityScheduler()).Should().Throw<ArgumentException>()
            .WithParameterName("services").WithMessage("*already registered as PriorityTaskScheduler*");
        services.Should().ContainSingle();
        var noServices = () => ((IServiceCollection)null!).AddPriorityScheduler();
        noServices.Should().Throw<ArgumentNullException>().WithParameterName("services");
    }

    [Fact]
    public async Task NoScheduler_ThePumpCreatesAndOwnsOne()
    {
        var builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        var (queue, ranOn) = AddPump(builder.Services);
        using var host = builder.Build();

        await host.StartAsync();
        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 3, TimeProvider.System, Limit, TimeSpan.FromMilliseconds(10));
        await host.StopAsync();

        var own = host.Services.GetRequiredKeyedService<MessagePumpHostedService>("orders").Pump.Scheduler;
        own.Name.Should().Be("orders");
        ranOn.Should().HaveCount(3).And.OnlyContain(s => ReferenceEquals(s, own));
    }

    private static void Register(IServiceCollection services, string registration, PriorityTaskScheduler scheduler)
    {
        switch (registration)
        {
            case "AddSingleton(new PriorityTaskScheduler(...))":
                services.AddSingleton(scheduler);
                break;
            case "AddSingleton<PriorityScheduler>(new PriorityTaskScheduler(...))":
                services.AddSingleton<PriorityScheduler>(scheduler);
                break;
            case "AddSingleton(provider => new PriorityTaskScheduler(...))":
                services.AddSingleton(_ => scheduler);
                break;
            case "AddSingleton<PriorityScheduler>(provider => new PriorityTaskScheduler(...))":
                services.AddSingleton<PriorityScheduler>(_ => scheduler);
                break;
            case "the same instance under both types":
                services.AddSingleton(scheduler);
                services.AddSingleton<PriorityScheduler>(provider => provider.GetRequiredService<PriorityTaskScheduler>());
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(registration), registration, "not a registration of this test");
        }
    }

    private static (InMemoryQueue Queue, System.Collections.Concurrent.ConcurrentQueue<PriorityScheduler?> RanOn) AddPump(IServiceCollection services)
    {
        var queue = new InMemoryTransport().CreateQueue("orders");
        for (var i = 0; i < 3; i++)
        {
            queue.Send(BitConverter.GetBytes(i));
        }

        var ranOn = new System.Collections.Concurrent.ConcurrentQueue<PriorityScheduler?>();
        services.AddMessagePump("orders", _ => queue).WithHandler((_, _) =>
        {
            ranOn.Enqueue(PriorityScheduler.Current);
            return Task.CompletedTask;
        });
        return (queue, ranOn);
    }
}
