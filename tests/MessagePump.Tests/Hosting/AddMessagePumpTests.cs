using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.Hosting;
using PriorityAsync.MessagePump.Tests.Pump;

namespace PriorityAsync.MessagePump.Tests.Hosting;

public class AddMessagePumpTests
{
    [Fact]
    public async Task HostedPump_OnItsOwnScheduler_ConsumesTheQueue_AndStopsCleanly()
    {
        const int messages = 20;
        var queue = new InMemoryTransport().CreateQueue("orders");
        for (var i = 0; i < messages; i++)
        {
            queue.Send(BitConverter.GetBytes(i));
        }

        var services = new ServiceCollection();
        services.AddMessagePump(_ => queue, (context, cancellationToken) => Task.Delay(1, cancellationToken), o => o.Name = "hosted-orders");
        await using var provider = services.BuildServiceProvider();

        var hosted = provider.GetServices<IHostedService>().Should().ContainSingle().Which.Should().BeOfType<MessagePumpHostedService>().Subject;
        await hosted.StartAsync(CancellationToken.None);
        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, TimeProvider.System, TimeSpan.FromSeconds(20), TimeSpan.FromMilliseconds(10));
        await hosted.StopAsync(CancellationToken.None);

        hosted.Pump.Name.Should().Be("hosted-orders");
        hosted.Pump.Scheduler.Should().BeOfType<PriorityTaskScheduler>();
        hosted.Pump.GetStatistics().Should().BeEquivalentTo(new { Received = messages, Completed = messages, InFlight = 0 });
        queue.GetStatistics().ShouldBeConsistent();
    }

    [Fact]
    public async Task HostedPump_UsesTheRegisteredScheduler()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        var services = new ServiceCollection();
        services.AddSingleton<PriorityScheduler>(scheduler);
        services.AddMessagePump(_ => new InMemoryTransport().CreateQueue("q"), (_, _) => Task.CompletedTask);
        await using var provider = services.BuildServiceProvider();

        var hosted = (MessagePumpHostedService)provider.GetServices<IHostedService>().Single();

        hosted.Pump.Scheduler.Should().BeSameAs(scheduler);
        hosted.Pump.MaxInFlight.Should().Be(MessagePumpOptions.DefaultInFlightPerWorker);
    }

    [Fact]
    public void AddMessagePump_InvalidOptions_ThrowAtRegistration()
    {
        var services = new ServiceCollection();

        services.Invoking(s => s.AddMessagePump(_ => null!, (_, _) => Task.CompletedTask, o => o.MaxInFlight = 0))
            .Should().Throw<ArgumentOutOfRangeException>().WithParameterName(nameof(MessagePumpOptions.MaxInFlight));
        services.Invoking(s => s.AddMessagePump(null!, (_, _) => Task.CompletedTask))
            .Should().Throw<ArgumentNullException>().WithParameterName("sourceFactory");
        services.Invoking(s => s.AddMessagePump(_ => null!, null!))
            .Should().Throw<ArgumentNullException>().WithParameterName("handler");
        services.Should().BeEmpty();
    }

    [Fact]
    public void HostedService_LockBufferNotBelowTheSourcesLockDuration_Throws()
    {
        var queue = new InMemoryTransport().CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(5) });

        var create = () => new MessagePumpHostedService(queue, (_, _) => Task.CompletedTask, new MessagePumpOptions { LeaseKeeper = new() { LockRenewalBuffer = TimeSpan.FromSeconds(5) } });

        create.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("LeaseKeeper.LockRenewalBuffer");
    }
}
