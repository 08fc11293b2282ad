using System.Collections.Concurrent;
using System.Diagnostics;
using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Time;

/// <summary>
/// The dedicated timer thread itself (the clock every scheduler without a <see cref="PrioritySchedulerOptions.TimeProvider"/>
/// owns): the thread its callbacks run on, how its disposal ends that thread, how often a periodic timer fires, and
/// the system timers that take over after the disposal. Real time: only orderings, occurrences and generous upper
/// bounds on counts are asserted.
/// </summary>
public class DedicatedTimerThreadTests
{
    [Fact]
    public async Task Callbacks_RunOnOneBackgroundThread_NamedAfterTheOwner_AtHighestPriority()
    {
        using var clock = new DedicatedTimerTimeProvider("dtt");
        var seen = new TaskCompletionSource<(string? Name, bool Background, ThreadPriority Priority, bool Pool)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var timer = clock.CreateTimer(
            _ =>
            {
                var thread = Thread.CurrentThread;
                seen.TrySetResult((thread.Name, thread.IsBackground, thread.Priority, thread.IsThreadPoolThread));
            },
            null,
            TimeSpan.Zero,
            Timeout.InfiniteTimeSpan);

        (await Bounded.Within(seen.Task, "the firing")).Should().Be(("dtt timers", true, ThreadPriority.Highest, false));
    }

    [Fact]
    public void CreateTimer_WithoutACallback_IsRejectedNamingIt()
    {
        using var clock = new DedicatedTimerTimeProvider("dtt-null");

        clock.Invoking(c => c.CreateTimer(null!, null, TimeSpan.Zero, Timeout.InfiniteTimeSpan)).Should().Throw<ArgumentNullException>().WithParameterName("callback");
    }

    [Fact]
    public async Task Dispose_ReturnsOnlyOnceAFiringInProgressHasEnded_AndATimerOverdueMeanwhileStillFires()
    {
        var clock = new DedicatedTimerTimeProvider("dtt-join");
        using var started = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var firingEnded = false;
        using var timer = clock.CreateTimer(
            _ =>
            {
                started.Set();
                release.Wait(Bounded.Generous);
                Volatile.Write(ref firingEnded, true);
            },
            null,
            TimeSpan.Zero,
            Timeout.InfiniteTimeSpan);
        Bounded.Wait(started, "the firing's start");
        var overdueFired = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var overdue = clock.CreateTimer(_ => overdueFired.TrySetResult(), null, TimeSpan.FromMilliseconds(10), Timeout.InfiniteTimeSpan);
        await Task.Delay(50); // falls due while the timer thread is busy

        var dispose = Task.Run(clock.Dispose);
        await Bounded.Within(overdueFired.Task, "the timer that fell due while the thread was busy (on a system timer now)");
        await Task.Delay(50);

        dispose.IsCompleted.Should().BeFalse("the timer thread is still running the firing");
        release.Set();
        await Bounded.Within(dispose, "the disposal");
        Volatile.Read(ref firingEnded).Should().BeTrue();
    }

    [Fact]
    public async Task Dispose_FromACallbackOnTheTimerThread_DoesNotWaitForItself()
    {
        var clock = new DedicatedTimerTimeProvider("dtt-self");
        var disposed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var timer = clock.CreateTimer(
            _ =>
            {
                clock.Dispose();
                disposed.TrySetResult();
            },
            null,
            TimeSpan.Zero,
            Timeout.InfiniteTimeSpan);

        await Bounded.Within(disposed.Task, "a disposal from the timer thread");
    }

    [Fact]
    public async Task PeriodicTimer_FiresAtMostOncePerPeriod()
    {
        var period = TimeSpan.FromMilliseconds(50);
        using var clock = new DedicatedTimerTimeProvider("dtt-period");
        var count = 0;
        var first = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var armed = Stopwatch.StartNew();
        using var timer = clock.CreateTimer(
            _ =>
            {
                Interlocked.Increment(ref count);
                first.TrySetResult();
            },
            null,
            period,
            period);

        await Bounded.Within(first.Task, "the first firing");
        await Task.Delay(500);
        timer.Dispose();
        var fired = Volatile.Read(ref count);
        var elapsed = armed.Elapsed;

        // The n-th firing is due n periods after the arming, so in the time this test measured itself (started before
        // the arming, read after the count) at most elapsed / period firings fit, plus one for the clocks' resolution.
        // This holds however long the delay took on a busy machine; a timer re-armed in the past would fire thousands
        // of times.
        var bound = (int)(elapsed / period) + 1;
        fired.Should().BeInRange(1, bound, $"{elapsed.TotalMilliseconds:0} ms passed between the arming and the count");
    }

    [Fact]
    public async Task AfterDisposal_AOneShotTimerWithAZeroPeriod_FiresOnce()
    {
        var clock = new DedicatedTimerTimeProvider("dtt-zero-period");
        clock.Dispose();
        var count = 0;
        var fired = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var timer = clock.CreateTimer(
            _ =>
            {
                Interlocked.Increment(ref count);
                fired.TrySetResult();
            },
            null,
            TimeSpan.FromMilliseconds(10),
            TimeSpan.Zero);

        await Bounded.Within(fired.Task, "the firing on a system timer");
        await Task.Delay(200);

        Volatile.Read(ref count).Should().Be(1, "a zero period means one firing, as for a System.Threading.Timer");
    }

    [Fact]
    public async Task AfterDisposal_ATimerMayStillBeArmedBeyondTheSystemTimersLimit()
    {
        var clock = new DedicatedTimerTimeProvider("dtt-far");
        clock.Dispose();
        var fired = new ConcurrentQueue<string>();
        using var far = clock.CreateTimer(_ => fired.Enqueue("far"), null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);

        far.Change(PrioritySchedulerOptions.MaxTimerDelay * 3, Timeout.InfiniteTimeSpan).Should().BeTrue("a later due time is reached in several hops");
        var marker = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var near = clock.CreateTimer(_ => marker.TrySetResult(), null, TimeSpan.FromMilliseconds(50), Timeout.InfiniteTimeSpan);
        await Bounded.Within(marker.Task, "the marker timer");

        fired.Should().BeEmpty();
    }

    [Fact]
    public async Task DisposeAsync_OfATimer_DisarmsIt_AndRefusesChanges()
    {
        using var clock = new DedicatedTimerTimeProvider("dtt-dispose-async");
        var fired = new ConcurrentQueue<string>();
        var timer = clock.CreateTimer(_ => fired.Enqueue("disposed"), null, TimeSpan.FromMilliseconds(50), Timeout.InfiniteTimeSpan);

        await timer.DisposeAsync();
        var marker = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var after = clock.CreateTimer(_ => marker.TrySetResult(), null, TimeSpan.FromMilliseconds(300), Timeout.InfiniteTimeSpan);
        await Bounded.Within(marker.Task, "the marker timer");

        fired.Should().BeEmpty();
        timer.Change(TimeSpan.Zero, Timeout.InfiniteTimeSpan).Should().BeFalse("a disposed timer cannot be re-armed");
    }

    [Fact]
    public void InvalidTimes_AreRejected_SayingWhatIsAllowed()
    {
        using var clock = new DedicatedTimerTimeProvider("dtt-invalid");
        using var timer = clock.CreateTimer(_ => { }, null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);

        timer.Invoking(t => t.Change(TimeSpan.FromMilliseconds(-2), Timeout.InfiniteTimeSpan)).Should().Throw<ArgumentOutOfRangeException>()
            .WithParameterName("dueTime").WithMessage("*zero or positive, or Timeout.InfiniteTimeSpan*");
    }
}
