using System.Collections.Concurrent;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Hosting;

/// <summary>The lease health check sees the processors the host runs, of both shapes, as it sees hosted pumps.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class ProcessorHealthTests
{
    [Fact]
    public async Task A_lock_a_hosted_processor_lost_makes_the_lease_health_check_degraded_naming_its_keeper()
    {
        // 2 s locks: the pump renews once 1 s is left, and the broker answers that renewal lock-lost.
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(2) });
        queue.Send(Encoding.UTF8.GetBytes("a"), "a");
        var canceled = new ConcurrentQueue<string>();
        var builder = Host.CreateApplicationBuilder();
        builder.Services.AddServiceBusPumpProcessor(
            _ => new ServiceBusPumpProcessor(sb.Transport, "orders", new ServiceBusPumpProcessorOptions { Identifier = "orders-worker" }),
            (_, processor) =>
            {
                processor.ProcessMessageAsync += async args =>
                {
                    try
                    {
                        await Task.Delay(Timeout.InfiniteTimeSpan, args.CancellationToken);
                    }
                    catch (OperationCanceledException)
                    {
                        canceled.Enqueue(args.Message.MessageId);
                        throw;
                    }
                };
                processor.ProcessErrorAsync += _ => Task.CompletedTask;
            });
        builder.Services.AddHealthChecks().AddLeaseHealthCheck();
        using var host = builder.Build();
        var health = host.Services.GetRequiredService<HealthCheckService>();

        (await health.CheckHealthAsync()).Entries["leases"].Description.Should().Be("0 lease keeper(s) healthy", "nothing runs before the host starts");
        await host.StartAsync();
        await Bounded.UntilAsync(() => Task.FromResult(queue.LockedCount == 1), SbHarness.HangBound, "the message locked", TimeSpan.FromMilliseconds(20));
        var running = await health.CheckHealthAsync();
        sb.Broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost);
        await Bounded.UntilAsync(() => Task.FromResult(!canceled.IsEmpty), SbHarness.HangBound, "the handler canceled for the lost lock", TimeSpan.FromMilliseconds(20));
        var lost = await health.CheckHealthAsync();
        await host.StopAsync();

        running.Status.Should().Be(HealthStatus.Healthy);
        running.Entries["leases"].Description.Should().Be("1 lease keeper(s) healthy", "the hosted processor's keeper is seen");
        lost.Status.Should().Be(HealthStatus.Degraded);
        lost.Entries["leases"].Description.Should().StartWith("'orders-worker").And.Contain("lost a lease at");
    }
}
