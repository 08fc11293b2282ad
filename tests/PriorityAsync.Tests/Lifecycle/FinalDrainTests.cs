using System.Collections.Concurrent;
using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Lifecycle;

/// <summary>
/// The final drain of a <see cref="PriorityAsyncContext"/> run: what the run's own items post from
/// its thread while it ends runs there, on the same thread, before the run returns; what other threads post while it
/// ends or after it is late work, counted. Orderings and counts only; the one real-time bound (the drain of a loop that
/// re-posts itself forever) is a few hundred milliseconds that the test waits out with a generous hang bound.
/// </summary>
public class FinalDrainTests
{
    [Fact]
    public void TheLastItemPostsAnother_FromTheContextThread_ItRunsThere_OnTheSameThread_BeforeRunReturns()
    {
        using var context = new PriorityAsyncContext();
        var ran = new ConcurrentQueue<(string What, int Thread)>();
        var contextThread = -1;

        context.Execute(() =>
        {
            contextThread = Environment.CurrentManagedThreadId;
            var processing = context.GetLane(LanePriority.Processing).SynchronizationContext;

            // Queued behind the entry point, so it runs in the final drain: the entry point has ended by then.
            processing.Post(
                _ =>
                {
                    ran.Enqueue(("last queued item", Environment.CurrentManagedThreadId));
                    processing.Post(_ => ran.Enqueue(("posted by it", Environment.CurrentManagedThreadId)), null);
                },
                null);
            return Task.CompletedTask;
        });

        // Read right after Execute returned: work rejected to the pool might not have run yet, or not on this thread.
        ran.Should().Equal(("last queued item", contextThread), ("posted by it", contextThread));
        contextThread.Should().Be(Environment.CurrentManagedThreadId, "Execute runs the context on the calling thread");
        context.RejectedWorkCount.Should().Be(0);
    }

    [Fact]
    public void AFireAndForgetRun_ThatYieldsAfterTheEntryEnded_FinishesOnTheContextThread_BeforeRunReturns()
    {
        using var context = new PriorityAsyncContext();
        var threads = new ConcurrentQueue<int>();
        Task? background = null;

        context.Execute(() =>
        {
            // Not awaited: the entry point ends at once, and the run goes on in the final drain. Each Task.Yield posts
            // the continuation from the context's own thread; each step is one item of the drain.
            background = context.GetLane(LanePriority.Receive).Run(async () =>
            {
                for (var step = 0; step < 5; step++)
                {
                    threads.Enqueue(Environment.CurrentManagedThreadId);
                    await Task.Yield();
                }

                // A new lane run started from the drain: the run's own work too.
                await context.GetLane(LanePriority.Lease).Run(() =>
                {
                    threads.Enqueue(Environment.CurrentManagedThreadId);
                    return Task.CompletedTask;
                });
            });
            return Task.CompletedTask;
        });

        background!.IsCompletedSuccessfully.Should().BeTrue("every step ran before Execute returned");
        threads.Should().HaveCount(6).And.OnlyContain(id => id == Environment.CurrentManagedThreadId);
        context.RejectedWorkCount.Should().Be(0);
    }

    [Fact]
    public void AForeignThreadPostsWhileTheRunEnds_AndAfterIt_BothAreLateWork_CountedAsToday()
    {
        using var context = new PriorityAsyncContext();
        var lane = context.GetLane(LanePriority.Receive).SynchronizationContext;
        var ran = new ConcurrentQueue<(string What, bool OnPool)>();
        using var duringRan = new ManualResetEventSlim();
        using var afterRan = new ManualResetEventSlim();
        var reports = new ConcurrentQueue<RejectedWorkKind>();
        context.RejectedWork += (_, e) => reports.Enqueue(e.Kind);

        context.Execute(() =>
        {
            lane.Post(
                _ =>
                {
                    // In the final drain: another thread posts, and this item waits until that post has returned.
                    var poster = new Thread(() => lane.Post(
                        _ =>
                        {
                            ran.Enqueue(("foreign, during the drain", Thread.CurrentThread.IsThreadPoolThread));
                            duringRan.Set();
                        },
                        null))
                    { IsBackground = true, Name = "foreign poster" };
                    poster.Start();
                    poster.Join(Bounded.Generous).Should().BeTrue("the foreign post returns at once");
                    lane.Post(_ => ran.Enqueue(("own, during the drain", Thread.CurrentThread.IsThreadPoolThread)), null);
                },
                null);
            return Task.CompletedTask;
        });

        ran.Should().Contain(("own, during the drain", false), "the context's own post ran on its thread before Execute returned");
        lane.Post(
            _ =>
            {
                ran.Enqueue(("after the end", Thread.CurrentThread.IsThreadPoolThread));
                afterRan.Set();
            },
            null);

        Bounded.Wait(duringRan, "the foreign post made while the run ended");
        Bounded.Wait(afterRan, "the post made after the run");
        ran.Should().BeEquivalentTo(new[] { ("own, during the drain", false), ("foreign, during the drain", true), ("after the end", true) });
        context.RejectedWorkCount.Should().Be(2, "both posts from other threads are late work");
        reports.Should().Equal(RejectedWorkKind.Post, RejectedWorkKind.Post);
    }

    [Fact]
    public async Task ALoopThatRePostsItselfForever_KeepsTheRunForShutdownTimeout_ThenGoesOnAsLateWork_AndRunReturns()
    {
        var bound = TimeSpan.FromMilliseconds(200);
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { ShutdownTimeout = bound });
        using var stop = new CancellationTokenSource();
        var onContext = 0;
        var offContext = 0;
        var contextThread = -1;
        Task? loop = null;

        // On a thread of its own, so that a drain that never ends fails the test instead of hanging it.
        var run = Task.Factory.StartNew(
            () => context.Execute(() =>
            {
                contextThread = Environment.CurrentManagedThreadId;
                loop = context.GetLane(LanePriority.Receive).Run(async () =>
                {
                    while (!stop.IsCancellationRequested)
                    {
                        if (Environment.CurrentManagedThreadId == contextThread && SynchronizationContext.Current is not null)
                        {
                            Interlocked.Increment(ref onContext);
                        }
                        else
                        {
                            Interlocked.Increment(ref offContext);
                        }

                        await Task.Yield();
                    }
                });
                return Task.CompletedTask;
            }),
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default);

        await Bounded.Within(run, "a run whose own loop re-posts itself forever");
        var onContextWhenReturned = Volatile.Read(ref onContext);
        await Bounded.Within(Task.Run(() => SpinWait.SpinUntil(() => Volatile.Read(ref offContext) > 0)), "the loop going on off the context");
        stop.Cancel();
        await Bounded.Within(loop!, "the loop after its cancellation");

        run.IsCompletedSuccessfully.Should().BeTrue();
        loop!.IsCompletedSuccessfully.Should().BeTrue();
        onContextWhenReturned.Should().BeGreaterThan(1, "the loop ran on the context's thread in the final drain");
        Volatile.Read(ref onContext).Should().Be(onContextWhenReturned, "nothing runs on the context after Execute returned");
        context.RejectedWorkCount.Should().Be(1, "the first post after the bound is late work; the loop then runs on the pool, outside the lane");
    }

    [Fact]
    public void ZeroShutdownTimeout_TheLastItemsPostsAreLateWork_AsBefore()
    {
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { ShutdownTimeout = TimeSpan.Zero });
        using var posted = new ManualResetEventSlim();
        var ranOnPool = false;

        context.Execute(() =>
        {
            var lane = context.GetLane(LanePriority.Processing).SynchronizationContext;
            lane.Post(
                _ => lane.Post(
                    _ =>
                    {
                        ranOnPool = Thread.CurrentThread.IsThreadPoolThread;
                        posted.Set();
                    },
                    null),
                null);
            return Task.CompletedTask;
        });

        Bounded.Wait(posted, "the post of the last item");
        ranOnPool.Should().BeTrue("a zero ShutdownTimeout takes no more work once the run has ended");
        context.RejectedWorkCount.Should().Be(1);
    }
}
