using System.Text;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Processor;

/// <summary>
/// <see cref="ServiceBusPumpProcessor"/> with the real SDK client against the test broker under the service's transient
/// faults: a busy or timed-out settlement, connections dropped mid-run. Outcomes only, never durations.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class ProcessorBrokerFaultTests(ITestOutputHelper output)
{
    [Fact]
    public async Task A_busy_complete_is_retried_by_the_client_and_the_message_completed_and_counted_once()
    {
        // 30 s locks: after a ServiceBusy the client waits about 10 s before its retry.
        await using var h = await ProcessorHarness.StartAsync(messages: 1, TimeSpan.FromSeconds(30));
        h.Sb.Broker.Faults.FailNext(ServiceBusTestOperations.Complete, 1, ServiceBusTestFault.ServerBusy);
        await using var processor = h.Create(_ => Task.CompletedTask);

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 1, "the completion after the busy answer");
        await processor.StopProcessingAsync();

        output.WriteLine(string.Join("; ", h.Errors.Select(e => $"{e.ErrorSource}: {e.Exception.Message}")));
        h.Queue.CompletionsOf("m0").Should().Be(1);
        h.Queue.LockedCount.Should().Be(0);
        h.Queue.ActiveCount.Should().Be(0);
        var stats = processor.GetStatistics()!;
        output.WriteLine(stats.ToString());
        h.Errors.Should().BeEmpty();
        stats.Completed.Should().Be(1);
        stats.Received.Should().Be(1);
        stats.LeasesLost.Should().Be(0);
    }

    [Fact]
    public async Task Completes_that_time_out_past_the_clients_retries_are_retried_by_the_pump_and_the_message_completed_once()
    {
        // The client tries 3 times (2 retries) and all 3 time out; the pump retries the settle itself while the lock lasts.
        await using var h = await ProcessorHarness.StartAsync(messages: 1, TimeSpan.FromSeconds(10));
        h.Sb.Broker.Faults.FailNext(ServiceBusTestOperations.Complete, 3, ServiceBusTestFault.Timeout);
        await using var processor = h.Create(_ => Task.CompletedTask);

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 1, "a completion after the timed-out ones");
        await processor.StopProcessingAsync();

        output.WriteLine(string.Join("; ", h.Errors.Select(e => $"{e.ErrorSource}: {e.Exception.GetType().Name} {e.Exception.Message}")));
        var stats = processor.GetStatistics()!;
        output.WriteLine(stats.ToString());
        h.Errors.Should().BeEmpty("a transient settle failure the pump retries is not the handler's business");
        stats.TransientRetries.Should().Be(1, "the client's three tries failed once as one settle call");
        stats.Completed.Should().Be(1);
        stats.Received.Should().Be(1, "no redelivery: the lock held");
        h.Queue.CompletionsOf("m0").Should().Be(1);
        h.Queue.LockedCount.Should().Be(0);
        h.Queue.ActiveCount.Should().Be(0);
    }

    [Fact]
    public async Task Connections_dropped_mid_run_leave_every_message_completed_once_and_nothing_locked()
    {
        const int Messages = 20;
        // 2 s locks: what the dropped links held comes back soon after the drop.
        await using var h = await ProcessorHarness.StartAsync(messages: Messages, TimeSpan.FromSeconds(2));
        await using var processor = h.Create(args => Task.Delay(50, args.CancellationToken), new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 4 });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount >= 4, "some completions before the drop");
        await h.Sb.Broker.Faults.DropConnectionsAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == Messages, "every message completed after the drop");
        await processor.StopProcessingAsync();

        output.WriteLine(string.Join("; ", h.Errors.Select(e => $"{e.ErrorSource}: {e.Exception.GetType().Name} {e.Exception.Message}")));
        output.WriteLine(processor.GetStatistics()!.ToString());
        for (var i = 0; i < Messages; i++)
        {
            h.Queue.CompletionsOf($"m{i}").Should().Be(1, $"m{i} is completed exactly once");
        }

        h.Queue.LockedCount.Should().Be(0);
        h.Queue.ActiveCount.Should().Be(0);
        h.Queue.DeadLetterCount.Should().Be(0);
    }
}
