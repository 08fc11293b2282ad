using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>The before/after of docs/keep-your-servicebusprocessor.md: the count of changed lines the page gives, and the kept side run.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class KeepProcessorSampleTests
{
    [Fact]
    public void The_after_changes_five_lines_of_the_before()
    {
        var file = File.ReadAllLines(Path.Combine(RepositoryRoot.Find(), "tests", "MessagePump.AzureServiceBus.Tests", "Docs", "KeepProcessorSample.cs"));
        var before = Region(file, "before");
        var after = Region(file, "after");

        var common = CommonLines(before, after);

        (after.Count - common).Should().Be(5, "the page says five lines of the after are new or changed");
        (before.Count - common).Should().Be(1, "one line of the before changes (the handler's token), none is removed");
    }

    [Fact]
    public async Task The_kept_processor_holds_a_message_past_its_lock_and_completes_it_once()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(2) });
        queue.Send("a"u8.ToArray(), "a");
        await using var client = new ServiceBusClient(broker.ConnectionString, SbHarness.ClientOptions());
        using var stop = new CancellationTokenSource();
        var handled = 0;
        var canceled = false;

        var run = KeepProcessorSample.After.RunAsync(
            client,
            async (_, cancellationToken) =>
            {
                Interlocked.Increment(ref handled);
                await Task.Delay(TimeSpan.FromSeconds(5), CancellationToken.None); // 2.5 locks
                canceled |= cancellationToken.IsCancellationRequested;
            },
            stop.Token);
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 1), SbHarness.HangBound, "the completion");
        await stop.CancelAsync();
        await run.WaitAsync(SbHarness.HangBound);

        handled.Should().Be(1, "the lock was kept: no redelivery");
        canceled.Should().BeFalse();
        queue.CompletionsOf("a").Should().Be(1);
        queue.RenewCount.Should().BeGreaterThanOrEqualTo(2);
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task The_receiver_loop_goes_on_past_a_lock_lost_while_handling_and_a_message_handed_over_with_its_lock_gone()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(2), MaxDeliveryCount = 10 });
        foreach (var id in new[] { "a", "b", "c" })
        {
            queue.Send(System.Text.Encoding.UTF8.GetBytes(id), id);
        }

        broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost); // a's first renewal: its lock is lost while handled
        await using var client = new ServiceBusClient(broker.ConnectionString, SbHarness.ClientOptions());

        // Prefetch locks the next messages into the receiver's buffer while one is handled for longer than a lock: the
        // loop gets their first deliveries with the locks gone (the broker has delivered them again meanwhile), as a
        // starved pool hands messages over late.
        await using var receiver = client.CreateReceiver("orders", new ServiceBusReceiverOptions { PrefetchCount = 5 });
        using var scheduler = new PriorityTaskScheduler();
        await using var keeper = new LeaseKeeper(scheduler);
        using var stop = new CancellationTokenSource();
        var handled = new System.Collections.Concurrent.ConcurrentQueue<string>();
        var lost = new System.Collections.Concurrent.ConcurrentQueue<(string Id, bool BeforeKept)>();
        keeper.LeaseLost += (_, e) => lost.Enqueue((e.Handle.Message.MessageId, e.Exception?.Message.Contains("before it was kept", StringComparison.Ordinal) == true));

        var run = KeepProcessorSample.Receiver.RunAsync(
            receiver,
            keeper,
            async (body, cancellationToken) =>
            {
                handled.Enqueue(body.ToString());
                await Task.Delay(TimeSpan.FromSeconds(3), cancellationToken); // 1.5 locks: kept, unless its lock is lost
            },
            stop.Token);
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 3 || run.IsCompleted), SbHarness.HangBound, "three completions");
        var ended = run.IsCompleted ? $"{run.Status}: {run.Exception?.InnerException?.Message}" : null;
        await stop.CancelAsync();
        await run.WaitAsync(SbHarness.HangBound).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);

        ended.Should().BeNull("the loop goes on past a lost lock and a message handed over with its lock gone, until it is stopped");
        queue.CompletedCount.Should().Be(3);
        queue.CompletionsOf("a").Should().Be(1);
        handled.Count(h => h == "a").Should().Be(2, "a's lock was lost while it was handled: it came back and was handled again");
        handled.Count(h => h == "b").Should().Be(1, "a kept lock is not lost, and a delivery handed over with its lock gone is not handled");
        handled.Count(h => h == "c").Should().Be(1, "a kept lock is not lost, and a delivery handed over with its lock gone is not handled");
        await Bounded.UntilAsync(() => Task.FromResult(keeper.GetStatistics().LeasesLost == lost.Count), SbHarness.HangBound, "every loss counted as reported");
        lost.Where(l => !l.BeforeKept).Select(l => l.Id).Should().Equal(["a"], "the one lock lost while its message was handled");
        lost.Count(l => l.BeforeKept).Should().Be((int)keeper.GetStatistics().LeasesLost - 1, "every other loss is a delivery handed over with its lock gone, counted and never handled");
    }

    private static List<string> Region(string[] file, string name)
    {
        var start = Array.FindIndex(file, l => l.Trim() == $"// <{name}>");
        var end = Array.FindIndex(file, l => l.Trim() == $"// </{name}>");
        start.Should().BeGreaterThan(-1);
        return [.. file[(start + 1)..end].Select(WithoutComment).Where(l => l.Length > 0)];
    }

    private static string WithoutComment(string line)
    {
        var comment = line.IndexOf("  //", StringComparison.Ordinal);
        return (comment >= 0 ? line[..comment] : line).Trim();
    }

    /// <summary>The length of the longest common subsequence of lines: the lines a diff leaves unchanged.</summary>
    private static int CommonLines(List<string> a, List<string> b)
    {
        var table = new int[a.Count + 1, b.Count + 1];
        for (var i = 1; i <= a.Count; i++)
        {
            for (var j = 1; j <= b.Count; j++)
            {
                table[i, j] = string.Equals(a[i - 1], b[j - 1], StringComparison.Ordinal) ? table[i - 1, j - 1] + 1 : Math.Max(table[i - 1, j], table[i, j - 1]);
            }
        }

        return table[a.Count, b.Count];
    }
}
