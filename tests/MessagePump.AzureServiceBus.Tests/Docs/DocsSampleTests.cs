using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>The samples of docs/azure-service-bus.md run, or at least build, against the test broker.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class DocsSampleTests
{
    [Fact]
    public async Task The_pump_side_of_the_migration_handles_and_dead_letters_like_the_processor_side()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send("a"u8.ToArray(), "a");
        using var stop = new CancellationTokenSource();
        var handled = 0;

        var run = ProcessorMigrationSample.RunPumpAsync(sb.Transport, (_, _) => { Interlocked.Increment(ref handled); return Task.CompletedTask; }, stop.Token);
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 1), SbHarness.HangBound, "the completion");
        await stop.CancelAsync();
        await run.WaitAsync(SbHarness.HangBound);

        handled.Should().Be(1);
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task The_hosting_samples_build_their_pumps()
    {
        using var host = HostingSample.BuildFromConfiguration(
        [
            "--Pumps:Orders:ServiceBus:ConnectionString=Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true",
            "--Pumps:Orders:ServiceBus:QueueName=orders",
            "--Pumps:Orders:Pump:MaxInFlight=8",
        ]);
        var services = new Microsoft.Extensions.DependencyInjection.ServiceCollection();
        HostingSample.ConfigureInCode(services);

        var pump = Microsoft.Extensions.DependencyInjection.ServiceProviderKeyedServiceExtensions.GetRequiredKeyedService<PriorityAsync.MessagePump.Hosting.MessagePumpHostedService>(host.Services, "orders").Pump;
        pump.MaxInFlight.Should().Be(8);
        services.Should().Contain(d => d.IsKeyedService && "billing".Equals(d.ServiceKey));
        await Task.CompletedTask;
    }

    [Fact]
    public async Task The_hosted_processor_sample_completes_messages_and_its_stop_leaves_nothing_locked()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send("a"u8.ToArray(), "a");
        queue.Send("b"u8.ToArray(), "b");
        using var host = HostingSample.BuildProcessorHost([$"--ServiceBus:ConnectionString={broker.ConnectionString}"]);

        await host.StartAsync();
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 2), SbHarness.HangBound, "two completions");
        await host.StopAsync();

        queue.LockedCount.Should().Be(0);
    }
}
