using System.Globalization;
using System.Text.RegularExpressions;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>The samples of docs/keep-your-servicebusprocessor.md: the count of changed lines the page gives, checked on its own blocks, and the samples run.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class KeepProcessorSampleTests
{
    [Fact]
    public void The_count_of_changed_lines_the_page_gives_is_that_of_its_own_before_and_after_blocks_usings_included()
    {
        var root = RepositoryRoot.Find();
        var page = File.ReadAllText(Path.Combine(root, "docs", "keep-your-servicebusprocessor.md"));
        var section = page[page.IndexOf("## Before and after", StringComparison.Ordinal)..];
        var blocks = CSharpBlocks(section);
        var before = Lines(blocks[0]);
        var after = Lines(blocks[1]);
        var stated = Regex.Match(section, @"\*\*(\d+) lines change\*\* \((\d+) added, (\d+) changed", RegexOptions.None, TimeSpan.FromSeconds(1));
        stated.Success.Should().BeTrue("the page states the count as \"**N lines change** (A added, C changed\"");
        var (changes, added, changed) = (int.Parse(stated.Groups[1].Value, CultureInfo.InvariantCulture), int.Parse(stated.Groups[2].Value, CultureInfo.InvariantCulture), int.Parse(stated.Groups[3].Value, CultureInfo.InvariantCulture));

        var common = CommonLines(before, after);

        before.Should().Contain(l => l.StartsWith("using ", StringComparison.Ordinal), "the before is a whole file, its usings included");
        after.Where(l => l.StartsWith("using PriorityAsync", StringComparison.Ordinal)).Should().HaveCount(3, "the after's usings are part of what changes");
        (after.Count - common).Should().Be(changes, "the page says that many lines of the after are new or changed");
        (before.Count - common).Should().Be(changed, "the page says that many lines of the before change, none is removed");
        (changes - changed).Should().Be(added);
        var readme = File.ReadAllText(Path.Combine(root, "README.md"));
        Regex.Match(readme, @"keep its locks: (\d+) lines change", RegexOptions.None, TimeSpan.FromSeconds(1)).Groups[1].Value.Should().Be(changes.ToString(CultureInfo.InvariantCulture), "README.md repeats the page's count");
    }

    [Fact]
    public async Task A_handler_that_completes_through_the_handle_keeps_the_lock_past_its_duration_and_no_loss_is_counted()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(2) });
        queue.Send("a"u8.ToArray(), "a");
        await using var client = new ServiceBusClient(broker.ConnectionString, SbHarness.ClientOptions());
        using var scheduler = new PriorityTaskScheduler();
        await using var keeper = new LeaseKeeper(scheduler);
        await using var processor = client.CreateProcessor("orders", new ServiceBusProcessorOptions { AutoCompleteMessages = false, MaxAutoLockRenewalDuration = TimeSpan.Zero });
        var handled = 0;
        KeepProcessorSample.SettleThroughHandle.Attach(processor, keeper, async (_, _) =>
        {
            Interlocked.Increment(ref handled);
            await Task.Delay(TimeSpan.FromSeconds(5), CancellationToken.None); // 2.5 locks
        });
        processor.ProcessErrorAsync += _ => Task.CompletedTask;

        await processor.StartProcessingAsync();
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 1), SbHarness.HangBound, "the completion");
        await processor.StopProcessingAsync();

        handled.Should().Be(1, "the lock was kept: no redelivery");
        queue.CompletionsOf("a").Should().Be(1);
        keeper.GetStatistics().LeasesLost.Should().Be(0);
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

        var run = KeepProcessorSamples.After.OrdersConsumer.RunAsync(
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
        await Bounded.UntilAsync(() => Task.FromResult(keeper.GetStatistics().LeasesLost == lost.Count), SbHarness.HangBound, "every loss counted as reported");
        var lostWhileHandled = lost.Where(l => !l.BeforeKept).Select(l => l.Id).ToList();
        lostWhileHandled.Should().Contain("a", "a's lock was lost while it was handled (the injected fault)");
        handled.Count(h => h == "a").Should().Be(2, "a came back after its lost lock and was handled again");
        foreach (var id in new[] { "a", "b", "c" })
        {
            // A prefetched delivery may reach Keep with a few milliseconds of lock left and lose it at its first
            // renewal: then it is handled again. Every handling but the completed one ended with a loss the keeper reported.
            handled.Count(h => h == id).Should().Be(1 + lostWhileHandled.Count(l => l == id), $"{id} is handled once, plus once per lock lost while it was handled; a delivery handed over with its lock gone is not handled");
        }

        lost.Count(l => l.BeforeKept).Should().Be((int)keeper.GetStatistics().LeasesLost - lostWhileHandled.Count, "every other loss is a delivery handed over with its lock gone, counted and never handled");
    }

    /// <summary>The bodies of the C# blocks of <paramref name="markdown"/>, in order.</summary>
    private static List<string> CSharpBlocks(string markdown) =>
        [.. Regex.Matches(markdown, "^```csharp\\n(.*?)^```$", RegexOptions.Multiline | RegexOptions.Singleline, TimeSpan.FromSeconds(1)).Select(m => m.Groups[1].Value)];

    /// <summary>A block's lines as a diff compares them: trailing comments, indentation and blank lines left out.</summary>
    private static List<string> Lines(string block) =>
        [.. block.Split('\n').Select(WithoutComment).Where(l => l.Length > 0)];

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
