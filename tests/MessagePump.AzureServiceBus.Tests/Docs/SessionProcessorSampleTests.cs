using System.Collections.Concurrent;
using System.Text;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>The session processor sample of docs/azure-service-bus.md runs against the test broker.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class SessionProcessorSampleTests
{
    [Fact]
    public async Task The_session_processor_sample_handles_each_session_in_order_and_stops_with_nothing_locked()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders-by-customer", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30), RequiresSession = true });
        foreach (var customer in new[] { "ada", "bob" })
        {
            for (var i = 0; i < 3; i++)
            {
                queue.Send(Encoding.UTF8.GetBytes($"{customer}{i}"), $"{customer}{i}", sessionId: customer);
            }
        }

        var handled = new ConcurrentDictionary<string, ConcurrentQueue<string>>(StringComparer.Ordinal);
        await using var client = new ServiceBusClient(sb.Broker.ConnectionString, TestBrokerHarness<TimeProvider>.ClientOptions());
        using var stop = new CancellationTokenSource();
        var run = SessionProcessorSample.RunAsync(
            client,
            (session, body, _) =>
            {
                handled.GetOrAdd(session, _ => new ConcurrentQueue<string>()).Enqueue(body.ToString());
                return Task.CompletedTask;
            },
            stop.Token);

        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 6), SbHarness.HangBound, "six completions", TimeSpan.FromMilliseconds(20));
        await stop.CancelAsync();
        await run.WaitAsync(SbHarness.HangBound);

        handled["ada"].Should().Equal("ada0", "ada1", "ada2");
        handled["bob"].Should().Equal("bob0", "bob1", "bob2");
        queue.LockedCount.Should().Be(0);
    }
}
