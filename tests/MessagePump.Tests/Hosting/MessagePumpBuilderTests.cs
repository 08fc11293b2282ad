using System.Collections.Concurrent;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using PriorityAsync.MessagePump.Hosting;
using PriorityAsync.MessagePump.Tests.Pump;

namespace PriorityAsync.MessagePump.Tests.Hosting;

public class MessagePumpBuilderTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(20);

    [Fact]
    public async Task Options_AreBoundFromConfiguration_IncludingTimeSpans()
    {
        var queue = Queue("orders", messages: 10);
        var builder = EmptyHost(new()
        {
            ["MessagePumps:orders:MaxInFlight"] = "7",
            ["MessagePumps:orders:MaxBatchSize"] = "5",
            ["MessagePumps:orders:LeaseKeeper:LockRenewalBuffer"] = "00:00:03",
            ["MessagePumps:orders:TransientRetryDelay"] = "00:00:02",
            ["MessagePumps:orders:EmptyReceiveDelay"] = "00:00:00.050",
            ["MessagePumps:orders:ShutdownTimeout"] = "00:00:05",
        });
        builder.Services.AddMessagePump("orders", _ => queue)
            .BindConfiguration("MessagePumps:orders")
            .WithHandler((_, _) => Task.CompletedTask);
        using var host = builder.Build();

        var options = host.Services.GetRequiredService<IOptionsMonitor<MessagePumpOptions>>().Get("orders");
        options.Should().BeEquivalentTo(new
        {
            Name = "orders",
            MaxInFlight = 7,
            MaxBatchSize = 5,
            LeaseKeeper = new { LockRenewalBuffer = TimeSpan.FromSeconds(3) },
            TransientRetryDelay = TimeSpan.FromSeconds(2),
            EmptyReceiveDelay = TimeSpan.FromMilliseconds(50),
            ShutdownTimeout = TimeSpan.FromSeconds(5),
            LeaseLane = LanePriority.Lease,
            ProcessingLane = LanePriority.Processing,
            ReceiveLane = LanePriority.Receive,
            TimeProvider = (TimeProvider?)null,
        });

        await host.StartAsync();
        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 10, TimeProvider.System, Limit, TimeSpan.FromMilliseconds(10));
        await host.StopAsync();

        var pump = host.Services.GetRequiredKeyedService<MessagePumpHostedService>("orders").Pump;
        pump.Name.Should().Be("orders");
        pump.MaxInFlight.Should().Be(7);
        host.Services.GetServices<IHostedService>().OfType<MessagePumpHostedService>().Should().ContainSingle().Which.Pump.Should().BeSameAs(pump);
    }

    [Fact]
    public async Task Configure_AppliesAfterConfiguration_AndMaySetTheName()
    {
        var builder = EmptyHost(new() { ["MessagePumps:orders:MaxInFlight"] = "7", ["MessagePumps:orders:MaxBatchSize"] = "5" });
        builder.Services.AddMessagePump("orders", _ => Queue("orders"))
            .BindConfiguration("MessagePumps:orders")
            .Configure(o => (o.MaxBatchSize, o.Name) = (9, "orders-eu"))
            .WithHandler((_, _) => Task.CompletedTask);
        using var host = builder.Build();

        var options = host.Services.GetRequiredService<IOptionsMonitor<MessagePumpOptions>>().Get("orders");

        (options.Name, options.MaxInFlight, options.MaxBatchSize).Should().Be(("orders-eu", 7, 9));
        await Task.CompletedTask;
    }

    [Fact]
    public void InfiniteShutdownTimeout_BindsFromMinusOneMillisecond()
    {
        var builder = EmptyHost(new() { ["MessagePumps:orders:ShutdownTimeout"] = "-00:00:00.001", ["MessagePumps:orders:maxinflight"] = "3" });
        builder.Services.AddMessagePump("orders", _ => Queue("orders")).BindConfiguration("MessagePumps:orders").WithHandler((_, _) => Task.CompletedTask);
        using var host = builder.Build();

        var options = host.Services.GetRequiredService<IOptionsMonitor<MessagePumpOptions>>().Get("orders");

        (options.ShutdownTimeout, options.MaxInFlight).Should().Be((Timeout.InfiniteTimeSpan, 3), "keys are case-insensitive");
    }

    [Theory]
    [InlineData("MaxInFlight", "0")]
    [InlineData("MaxBatchSize", "1001")]
    [InlineData("EmptyReceiveDelay", "00:00:00")]
    [InlineData("ShutdownTimeout", "-00:00:01")]
    public async Task InvalidValue_FailsTheHostsStart_NamingThePumpAndTheOption(string key, string value)
    {
        var started = false;
        var builder = EmptyHost(new() { [$"MessagePumps:orders:{key}"] = value });
        builder.Services.AddMessagePump("orders", _ => Queue("orders"))
            .BindConfiguration("MessagePumps:orders")
            .WithHandler((_, _) => Task.CompletedTask);
        builder.Services.AddHostedService(_ => new StartProbe(() => started = true));
        using var host = builder.Build();

        var failure = await host.Invoking(h => h.StartAsync()).Should().ThrowAsync<OptionsValidationException>();

        failure.Which.OptionsName.Should().Be("orders");
        failure.Which.Message.Should().Contain("Message pump 'orders'").And.Contain($"MessagePumpOptions.{key}");
        started.Should().BeFalse("options are validated before any hosted service starts");
    }

    [Theory]
    [InlineData("EmptyReceiveDelay", "soon")]
    [InlineData("MaxInFlight", "many")]
    public async Task UnparsableValue_FailsTheHostsStart_NamingTheKey(string key, string value)
    {
        var builder = EmptyHost(new() { [$"MessagePumps:orders:{key}"] = value });
        builder.Services.AddMessagePump("orders", _ => Queue("orders"))
            .BindConfiguration("MessagePumps:orders")
            .WithHandler((_, _) => Task.CompletedTask);
        using var host = builder.Build();

        var failure = await host.Invoking(h => h.StartAsync()).Should().ThrowAsync<InvalidOperationException>();

        failure.Which.Message.Should().Contain($"MessagePumps:orders:{key}");
    }

    [Fact]
    public async Task LockRenewalBufferNotBelowTheSourcesLock_FailsTheHostsStart_NamingThePump()
    {
        var queue = new InMemoryTransport().CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(5) });
        var builder = EmptyHost(new() { ["MessagePumps:orders:LeaseKeeper:LockRenewalBuffer"] = "00:00:05" });
        builder.Services.AddMessagePump("orders", _ => queue)
            .BindConfiguration("MessagePumps:orders")
            .WithHandler((_, _) => Task.CompletedTask);
        using var host = builder.Build();

        var failure = await host.Invoking(h => h.StartAsync()).Should().ThrowAsync<InvalidOperationException>();

        failure.Which.Message.Should().Contain("Message pump 'orders'").And.Contain("LockRenewalBuffer");
        failure.Which.InnerException.Should().BeOfType<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("LeaseKeeper.LockRenewalBuffer");
    }

    [Fact]
    public async Task HandlerType_IsResolvedInAScopePerMessage_DisposedAfterEach()
    {
        const int messages = 12;
        var queue = Queue("orders", messages);
        var builder = EmptyHost([]);
        builder.Services.AddSingleton<ProbeLog>();
        builder.Services.AddScoped<ScopedProbe>();
        builder.Services.AddMessagePump<ProbeHandler>("orders", _ => queue);
        using var host = builder.Build();

        await host.StartAsync();
        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, TimeProvider.System, Limit, TimeSpan.FromMilliseconds(10));
        await host.StopAsync();

        var log = host.Services.GetRequiredService<ProbeLog>();
        log.Handled.Should().HaveCount(messages);
        log.Handled.Select(h => h.Probe).Distinct().Should().HaveCount(messages, "each message has its own scope");
        log.Handled.Should().OnlyContain(h => h.Handler.Probe == h.Probe, "the handler is resolved from the message's scope");
        log.Handled.Should().OnlyContain(h => !h.DisposedWhileHandling && h.Probe.Disposed, "the scope is disposed after the handler");
    }

    [Fact]
    public async Task HandlerThrowing_AbandonsTheMessage_AndDisposesTheScope()
    {
        const int messages = 6;
        var queue = Queue("orders", messages);
        var builder = EmptyHost([]);
        builder.Services.AddSingleton<ProbeLog>();
        builder.Services.AddScoped<ScopedProbe>();
        builder.Services.AddMessagePump("orders", _ => queue).WithHandler<FailFirstDeliveryHandler>();
        using var host = builder.Build();

        await host.StartAsync();
        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, TimeProvider.System, Limit, TimeSpan.FromMilliseconds(10));
        await host.StopAsync();

        var pump = host.Services.GetRequiredKeyedService<MessagePumpHostedService>("orders").Pump;
        pump.GetStatistics().Should().BeEquivalentTo(new { HandlerFailures = messages, Abandoned = messages, Completed = messages });
        queue.GetStatistics().Should().BeEquivalentTo(new { Abandoned = messages, Completed = messages });
        var log = host.Services.GetRequiredService<ProbeLog>();
        log.Handled.Should().HaveCount(2 * messages);
        log.Handled.Where(h => h.Context.Message.DeliveryCount == 1).Should().HaveCount(messages).And.OnlyContain(h => h.Probe.Disposed);
        log.Handled.Should().OnlyContain(h => h.Probe.Disposed);
    }

    [Fact]
    public async Task TwoNamedPumps_HaveTheirOwnOptions_SourcesAndHandlers()
    {
        var orders = Queue("orders", messages: 5);
        var invoices = Queue("invoices", messages: 3);
        var builder = EmptyHost(new()
        {
            ["MessagePumps:orders:MaxInFlight"] = "4",
            ["MessagePumps:invoices:MaxInFlight"] = "2",
            ["MessagePumps:invoices:MaxBatchSize"] = "1",
        });
        var handledBy = new ConcurrentDictionary<string, int>();
        builder.Services.AddMessagePump("orders", _ => orders)
            .BindConfiguration("MessagePumps:orders")
            .WithHandler((_, _) => { handledBy.AddOrUpdate("orders", 1, (_, n) => n + 1); return Task.CompletedTask; });
        builder.Services.AddMessagePump("invoices", _ => invoices)
            .Bind(builder.Configuration.GetSection("MessagePumps:invoices"))
            .WithHandler((_, _) => { handledBy.AddOrUpdate("invoices", 1, (_, n) => n + 1); return Task.CompletedTask; });
        using var host = builder.Build();

        await host.StartAsync();
        await VirtualRun.WaitUntilAsync(
            () => orders.GetStatistics().Completed == 5 && invoices.GetStatistics().Completed == 3, TimeProvider.System, Limit, TimeSpan.FromMilliseconds(10));
        await host.StopAsync();

        var monitor = host.Services.GetRequiredService<IOptionsMonitor<MessagePumpOptions>>();
        (monitor.Get("orders").MaxInFlight, monitor.Get("orders").MaxBatchSize).Should().Be((4, MessagePumpOptions.DefaultMaxBatchSize));
        (monitor.Get("invoices").MaxInFlight, monitor.Get("invoices").MaxBatchSize).Should().Be((2, 1));
        host.Services.GetServices<IHostedService>().OfType<MessagePumpHostedService>().Select(s => (s.Pump.Name, s.Pump.MaxInFlight))
            .Should().BeEquivalentTo([("orders", 4), ("invoices", 2)]);
        handledBy.Should().BeEquivalentTo(new Dictionary<string, int> { ["orders"] = 5, ["invoices"] = 3 });
    }

    [Fact]
    public async Task ScopedDelegate_GetsTheMessagesScope()
    {
        const int messages = 4;
        var queue = Queue("q", messages);
        var probes = new ConcurrentBag<ScopedProbe>();
        var services = new ServiceCollection();
        services.AddScoped<ScopedProbe>();
        services.AddMessagePump(_ => queue).WithHandler((provider, _, _) =>
        {
            probes.Add(provider.GetRequiredService<ScopedProbe>());
            return Task.CompletedTask;
        });
        await using var provider = services.BuildServiceProvider();
        var hosted = provider.GetRequiredKeyedService<MessagePumpHostedService>(MessagePumpServiceCollectionExtensions.DefaultName);

        await hosted.StartAsync(CancellationToken.None);
        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, TimeProvider.System, Limit, TimeSpan.FromMilliseconds(10));
        await hosted.StopAsync(CancellationToken.None);

        hosted.Pump.Name.Should().Be(MessagePumpServiceCollectionExtensions.DefaultName);
        probes.Distinct().Should().HaveCount(messages).And.OnlyContain(p => p.Disposed);
    }

    [Fact]
    public async Task NoHandler_FailsTheHostsStart_NamingThePump()
    {
        var builder = EmptyHost([]);
        builder.Services.AddMessagePump("orders", _ => Queue("orders"));
        using var host = builder.Build();

        var failure = await host.Invoking(h => h.StartAsync()).Should().ThrowAsync<InvalidOperationException>();

        failure.Which.Message.Should().Contain("'orders' has no handler");
    }

    [Fact]
    public void SameNameTwice_Throws_AndArgumentsAreChecked()
    {
        var services = new ServiceCollection();
        services.AddMessagePump("orders", _ => Queue("orders"));

        services.Invoking(s => s.AddMessagePump("orders", _ => Queue("orders")))
            .Should().Throw<ArgumentException>().WithParameterName("name").WithMessage("*'orders' is already registered*");
        services.Invoking(s => s.AddMessagePump(_ => Queue("a"), (_, _) => Task.CompletedTask, o => o.Name = "orders"))
            .Should().Throw<ArgumentException>().WithParameterName("name");
        services.Invoking(s => s.AddMessagePump(" ", _ => Queue("orders"))).Should().Throw<ArgumentException>().WithParameterName("name");
        services.Invoking(s => s.AddMessagePump("x", null!)).Should().Throw<ArgumentNullException>().WithParameterName("sourceFactory");
        var builder = services.AddMessagePump("y", _ => Queue("y"));
        builder.Invoking(b => b.BindConfiguration("")).Should().Throw<ArgumentException>().WithParameterName("configSectionPath");
        builder.Invoking(b => b.Bind(null!)).Should().Throw<ArgumentNullException>().WithParameterName("configuration");
        builder.Invoking(b => b.Configure(null!)).Should().Throw<ArgumentNullException>().WithParameterName("configure");
        builder.Invoking(b => b.WithHandler((Func<MessageContext, CancellationToken, Task>)null!)).Should().Throw<ArgumentNullException>().WithParameterName("handler");
        builder.Name.Should().Be("y");
        builder.Services.Should().BeSameAs(services);
    }

    [Fact]
    public async Task HostedPump_CreatesItsMeterThroughTheContainersMeterFactory()
    {
        var queue = Queue("metered", messages: 3);
        var builder = EmptyHost(new());
        builder.Services.AddMetrics();
        builder.Services.AddMessagePump("metered", _ => queue).WithHandler((_, _) => Task.CompletedTask);
        using var host = builder.Build();
        var factory = host.Services.GetRequiredService<System.Diagnostics.Metrics.IMeterFactory>();
        var scopes = new ConcurrentBag<object?>();
        using var listener = new System.Diagnostics.Metrics.MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == MessagePumpDiagnostics.MeterName)
                {
                    scopes.Add(instrument.Meter.Scope);
                }
            },
        };
        listener.Start();

        await host.StartAsync();
        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 3, TimeProvider.System, Limit, TimeSpan.FromMilliseconds(10));
        await host.StopAsync();

        scopes.Should().Contain(factory, "AddMessagePump passes the container's IMeterFactory when the options name none");
    }

    private static InMemoryQueue Queue(string name, int messages = 0)
    {
        var queue = new InMemoryTransport().CreateQueue(name);
        for (var i = 0; i < messages; i++)
        {
            queue.Send(BitConverter.GetBytes(i));
        }

        return queue;
    }

    private static HostApplicationBuilder EmptyHost(Dictionary<string, string?> configuration)
    {
        var builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(configuration);
        return builder;
    }

    internal sealed class ScopedProbe : IAsyncDisposable
    {
        public bool Disposed { get; private set; }

        public ValueTask DisposeAsync()
        {
            Disposed = true;
            return ValueTask.CompletedTask;
        }
    }

    internal sealed record Handling(MessageContext Context, ScopedProbe Probe, ProbeHandler Handler, bool DisposedWhileHandling);

    internal sealed class ProbeLog
    {
        public ConcurrentQueue<Handling> Handled { get; } = new();
    }

    internal sealed class ProbeHandler(ScopedProbe probe, ProbeLog log, IServiceProvider scope) : IMessageHandler
    {
        public ScopedProbe Probe => probe;

        public async Task HandleAsync(MessageContext context, CancellationToken cancellationToken)
        {
            await Task.Yield();
            log.Handled.Enqueue(new Handling(context, scope.GetRequiredService<ScopedProbe>(), this, probe.Disposed));
        }
    }

    internal sealed class FailFirstDeliveryHandler(ScopedProbe probe, ProbeLog log) : IMessageHandler
    {
        public Task HandleAsync(MessageContext context, CancellationToken cancellationToken)
        {
            log.Handled.Enqueue(new Handling(context, probe, null!, probe.Disposed));
            return context.Message.DeliveryCount == 1 ? throw new InvalidOperationException("first delivery fails") : Task.CompletedTask;
        }
    }

    private sealed class StartProbe(Action onStart) : IHostedService
    {
        public Task StartAsync(CancellationToken cancellationToken)
        {
            onStart();
            return Task.CompletedTask;
        }

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }
}
