using System.Collections.Concurrent;
using System.Diagnostics;
using Nito.AsyncEx;
using PriorityAsync.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.Tests.Scheduling;

public class HostedPrioritySchedulerTests(ITestOutputHelper output)
{
    [Fact]
    public async Task QueuedWork_RunsOnTheHostThread_MostUrgentFirst()
    {
        using var host = new FifoThreadContext();
        await using var scheduler = new HostedPriorityScheduler(host);
        using var hostBusy = new ManualResetEventSlim();
        host.Post(_ => hostBusy.Wait(), null); // the host's loop is busy, so all three lanes fill before a dispatch runs
        var order = new ConcurrentQueue<(string Lane, int Thread)>();
        foreach (var priority in new[] { LanePriority.Receive, LanePriority.Processing, LanePriority.Lease })
        {
            scheduler.GetLane(priority).SynchronizationContext.Post(_ => order.Enqueue((PriorityScheduler.CurrentLane!.Name, Environment.CurrentManagedThreadId)), null);
        }

        hostBusy.Set();
        scheduler.Complete();
        await scheduler.Completion.WaitAsync(Bounded.Generous);

        order.Select(o => o.Lane).Should().Equal(
            scheduler.GetLane(LanePriority.Lease).Name,
            scheduler.GetLane(LanePriority.Processing).Name,
            scheduler.GetLane(LanePriority.Receive).Name);
        order.Should().OnlyContain(o => o.Thread == host.ThreadId);
    }

    [Fact]
    public void OnNitoAsyncContext_AwaitKeepsTheLane_AndTimersResumeOnTheHostThread()
    {
        var seen = new List<(string? Lane, int Thread)>();
        var hostThread = 0;
        AsyncContext.Run(async () =>
        {
            hostThread = Environment.CurrentManagedThreadId;
            var scheduler = new HostedPriorityScheduler(SynchronizationContext.Current!);
            var lane = scheduler.GetLane(LanePriority.Processing);
            await lane.Run(async () =>
            {
                seen.Add((PriorityScheduler.CurrentLane?.Name, Environment.CurrentManagedThreadId));
                await Task.Yield();
                seen.Add((PriorityScheduler.CurrentLane?.Name, Environment.CurrentManagedThreadId));
                await Task.Delay(TimeSpan.FromMilliseconds(20), scheduler.TimeProvider);
                seen.Add((PriorityScheduler.CurrentLane?.Name, Environment.CurrentManagedThreadId));
            });
            scheduler.Complete();
            await scheduler.Completion;
        });

        seen.Should().HaveCount(3).And.OnlyContain(s => s.Lane == "Processing" && s.Thread == hostThread);
    }

    [Fact]
    public void OnNitoAsyncContext_WorkQueuedInOneHostCallback_RunsMostUrgentFirst()
    {
        var order = new List<string>();
        AsyncContext.Run(async () =>
        {
            var scheduler = new HostedPriorityScheduler(SynchronizationContext.Current!);
            for (var i = 2; i >= 0; i--)
            {
                var name = $"rank {i}";
                scheduler.Lanes[i].SynchronizationContext.Post(_ => order.Add(name), null);
            }

            scheduler.Complete();
            await scheduler.Completion;
        });

        order.Should().Equal("rank 0", "rank 1", "rank 2");
    }

    [Fact]
    public async Task ShouldYield_AndYieldTo_WorkAsOnTheOtherSchedulers()
    {
        using var host = new FifoThreadContext();
        await using var scheduler = new HostedPriorityScheduler(host);
        var trace = new ConcurrentQueue<string>();
        await scheduler.GetLane(LanePriority.Receive).Run(async () =>
        {
            trace.Enqueue($"yield before: {scheduler.ShouldYield}");
            scheduler.GetLane(LanePriority.Lease).SynchronizationContext.Post(_ => trace.Enqueue("lease"), null);
            trace.Enqueue($"yield after: {scheduler.ShouldYield}");
            await PriorityScheduler.YieldIfNeeded();
            trace.Enqueue("receive resumed");
            await PriorityScheduler.YieldTo(LanePriority.Processing);
            trace.Enqueue($"now in {PriorityScheduler.CurrentLane?.Name} on the host: {Environment.CurrentManagedThreadId == host.ThreadId}");
        }).WaitAsync(Bounded.Generous);

        trace.Should().Equal("yield before: False", "yield after: True", "lease", "receive resumed", "now in Processing on the host: True");
    }

    [Fact]
    public async Task HostMessages_InterleaveWithBusyLanes_WaitingAtMostOneBudgetPlusOneSlice()
    {
        using var host = new FifoThreadContext();
        var budget = TimeSpan.FromMilliseconds(20);
        await using var scheduler = new HostedPriorityScheduler(host, sliceBudget: budget);
        const int Items = 60;
        var slices = new (long Start, long End)[Items];
        var messages = new ConcurrentQueue<(long Posted, long Ran)>();
        var lane = scheduler.GetLane(LanePriority.Processing);
        var work = new List<Task>();
        for (var i = 0; i < Items; i++)
        {
            var index = i;
            work.Add(lane.Run(() =>
            {
                slices[index].Start = Stopwatch.GetTimestamp();
                if (index % 10 == 3)
                {
                    // A message posted straight to the host (input, paint) while the lanes are busy.
                    var posted = Stopwatch.GetTimestamp();
                    host.Post(_ => messages.Enqueue((posted, Stopwatch.GetTimestamp())), null);
                }

                CpuBound.Hold(TimeSpan.FromMilliseconds(5));
                slices[index].End = Stopwatch.GetTimestamp();
                return Task.CompletedTask;
            }));
        }

        await Task.WhenAll(work).WaitAsync(Bounded.Generous);

        var longestSlice = slices.Max(s => Stopwatch.GetElapsedTime(s.Start, s.End));
        messages.Should().HaveCount(Items / 10);
        foreach (var (posted, ran) in messages)
        {
            // The lane slices that ran on the host between the post and the message (the posting one included): at most one dispatch.
            var between = slices.Where(s => s.End > posted && s.Start < ran).ToArray();
            var laneTime = TimeSpan.FromTicks(between.Sum(s => Stopwatch.GetElapsedTime(s.Start, s.End).Ticks));
            output.WriteLine($"host message waited {Stopwatch.GetElapsedTime(posted, ran).TotalMilliseconds:F1} ms: {between.Length} slices, {laneTime.TotalMilliseconds:F1} ms of lane work (budget {budget.TotalMilliseconds} ms, longest slice {longestSlice.TotalMilliseconds:F1} ms)");
            laneTime.Should().BeLessThanOrEqualTo(budget + longestSlice);
            slices.Should().Contain(s => s.Start > ran, "the message ran while the lanes still had work");
        }
    }

    [Theory]
    [InlineData(20, 5)]
    [InlineData(20, 7)]
    [InlineData(15, 40)]
    public async Task HostMessages_InterleaveWithBusyLanes_AfterAtMostTheSlicesOfOneBudgetPlusOne_OnVirtualTime(int budgetMs, int sliceMs)
    {
        // Each slice stands for sliceMs of CPU: it advances the scheduler's (virtual) clock by that much, so how many
        // slices one dispatch runs depends on the budget only, never on the machine's load.
        var clock = new VirtualTimeProvider();
        using var host = new FifoThreadContext();
        await using var scheduler = new HostedPriorityScheduler(host, new PrioritySchedulerOptions { TimeProvider = clock }, TimeSpan.FromMilliseconds(budgetMs));
        using var hostBusy = new ManualResetEventSlim();
        host.Post(_ => hostBusy.Wait(), null); // every slice is queued before the first dispatch runs
        const int Items = 40;
        var trace = new List<(bool IsMessage, int Index)>(); // only the host's thread writes it
        var lane = scheduler.GetLane(LanePriority.Processing);
        var work = new List<Task>();
        for (var i = 0; i < Items; i++)
        {
            var index = i;
            work.Add(lane.Run(() =>
            {
                trace.Add((false, index));
                if (index % 10 == 1)
                {
                    host.Post(_ => trace.Add((true, index)), null); // input posted straight to the host while the lanes are busy
                }

                clock.Advance(TimeSpan.FromMilliseconds(sliceMs));
                return Task.CompletedTask;
            }));
        }

        hostBusy.Set();
        await Task.WhenAll(work).WaitAsync(Bounded.Generous);
        await scheduler.DisposeAsync();

        var allowed = (budgetMs / sliceMs) + 1; // one budget's worth of whole slices plus the one that crosses it
        var messages = trace.Select((entry, position) => (entry, position)).Where(t => t.entry.IsMessage).ToArray();
        messages.Should().HaveCount(Items / 10);
        foreach (var ((_, postedIn), position) in messages)
        {
            var slicesBefore = trace.Take(position).Count(t => !t.IsMessage && t.Index >= postedIn); // the posting slice included
            output.WriteLine($"budget {budgetMs} ms, slices of {sliceMs} ms: the message posted in slice {postedIn} ran after {slicesBefore} slices (at most {allowed})");
            slicesBefore.Should().BeInRange(1, allowed);
            trace.Skip(position).Should().Contain(t => !t.IsMessage, "the message ran while the lanes still had work");
        }
    }

    [Fact]
    public async Task Complete_RunsWhatIsQueued_ThenRejectsLateWorkOntoThePool()
    {
        using var host = new FifoThreadContext();
        var scheduler = new HostedPriorityScheduler(host);
        using var hostBusy = new ManualResetEventSlim();
        host.Post(_ => hostBusy.Wait(), null);
        var ran = 0;
        for (var i = 0; i < 10; i++)
        {
            scheduler.GetLane(LanePriority.Processing).SynchronizationContext.Post(_ => ran++, null);
        }

        scheduler.Complete();
        hostBusy.Set();
        await scheduler.Completion.WaitAsync(Bounded.Generous);
        ran.Should().Be(10);

        var late = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        scheduler.GetLane(LanePriority.Lease).SynchronizationContext.Post(_ => late.SetResult(Environment.CurrentManagedThreadId == host.ThreadId), null);
        (await late.Task.WaitAsync(Bounded.Generous)).Should().BeFalse("late work runs on the thread pool");
        scheduler.RejectedWorkCount.Should().Be(1);
        Action start = () => _ = scheduler.GetLane(LanePriority.Lease).Run(() => Task.CompletedTask);
        start.Should().Throw<InvalidOperationException>();
        await scheduler.DisposeAsync();
    }

    [Fact]
    public async Task ExceptionOfAPostedCallback_RaisesUnhandledException_AndFaultsCompletion()
    {
        using var host = new FifoThreadContext();
        var scheduler = new HostedPriorityScheduler(host);
        var reported = new ConcurrentQueue<Exception>();
        scheduler.UnhandledException += (_, e) => reported.Enqueue(e.Exception);
        scheduler.GetLane(LanePriority.Lease).SynchronizationContext.Post(_ => throw new TimeoutException("posted"), null);
        scheduler.Complete();

        var completion = async () => await scheduler.Completion.WaitAsync(Bounded.Generous);

        await completion.Should().ThrowAsync<TimeoutException>().WithMessage("posted");
        reported.Should().ContainSingle().Which.Message.Should().Be("posted");
        host.Errors.Should().BeEmpty();
    }

    [Fact]
    public void Constructor_RefusesANullHost_AndTheThreadPoolContext_NamingTheArgument()
    {
        var nullHost = () => new HostedPriorityScheduler(null!);
        var poolHost = () => new HostedPriorityScheduler(new SynchronizationContext());
        var badBudget = () => new HostedPriorityScheduler(new FifoThreadContextStub(), sliceBudget: TimeSpan.Zero);

        nullHost.Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("host");
        poolHost.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("host");
        badBudget.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("sliceBudget");
    }

    [Fact]
    public async Task AHostWhoseThreadHasEnded_RejectsTheWorkOntoThePool_AndFaultsCompletion()
    {
        var host = new FifoThreadContext();
        var scheduler = new HostedPriorityScheduler(host);
        host.Dispose(); // the UI thread has ended: its Post throws

        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        scheduler.GetLane(LanePriority.Processing).SynchronizationContext.Post(_ => ran.SetResult(), null);

        await ran.Task.WaitAsync(Bounded.Generous);
        scheduler.RejectedWorkCount.Should().Be(1);
        var completion = async () => await scheduler.Completion.WaitAsync(Bounded.Generous);
        await completion.Should().ThrowAsync<InvalidOperationException>().WithMessage("*refused the dispatch*");
    }

    [Fact]
    public async Task AHostThatRunsPostsOnASecondThread_IsDetected_AndFaultsCompletion()
    {
        var host = new NewThreadPerPostContext();
        var scheduler = new HostedPriorityScheduler(host);
        var lane = scheduler.GetLane(LanePriority.Processing).SynchronizationContext;
        var first = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lane.Post(_ => first.SetResult(), null);
        await first.Task.WaitAsync(Bounded.Generous);

        var second = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lane.Post(_ => second.SetResult(), null);

        var completion = async () => await scheduler.Completion.WaitAsync(Bounded.Generous);
        await completion.Should().ThrowAsync<InvalidOperationException>().WithMessage("*one thread*");
        await second.Task.WaitAsync(Bounded.Generous); // rejected onto the pool, not lost
        scheduler.RejectedWorkCount.Should().Be(1);
        host.Errors.Should().BeEmpty("nothing is thrown into a host that may run its posts on the thread pool");
    }

    /// <summary>A derived context that is never posted to (construction checks only).</summary>
    private sealed class FifoThreadContextStub : SynchronizationContext;
}
