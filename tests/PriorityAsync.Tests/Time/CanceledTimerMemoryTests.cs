using System.Runtime.CompilerServices;

namespace PriorityAsync.Tests.Time;

/// <summary>
/// A timer disposed long before it is due — a lease keeper's wait, canceled when its message completes — must not
/// keep what its callback captures alive until that due time: a consumer completing thousands of messages a second
/// with 30 s locks would otherwise hold every message of the last 15 s.
/// </summary>
public class CanceledTimerMemoryTests
{
    private const int Churn = 10_000;

    [Fact]
    public void VirtualTimeProvider_TimersDisposedBeforeTheyAreDue_DoNotKeepTheirStateAlive()
    {
        var clock = new VirtualTimeProvider();
        using var keepAlive = clock.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(30), Timeout.InfiniteTimeSpan); // earlier than the churn: stale entries never reach the top

        var firstState = DisposeEarlyTimers(clock);

        ForceFullCollection();
        firstState.IsAlive.Should().BeFalse("a disposed timer's entry is compacted away once stale entries outnumber live ones");
        clock.ActiveTimerCount.Should().Be(1);
    }

    [Fact]
    public void DedicatedTimerTimeProvider_TimersDisposedBeforeTheyAreDue_DoNotKeepTheirStateAlive()
    {
        using var clock = new DedicatedTimerTimeProvider("canceled-timer-memory");
        using var keepAlive = clock.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(30), Timeout.InfiniteTimeSpan); // earlier than the churn: stale entries never reach the top

        var firstState = DisposeEarlyTimers(clock);

        ForceFullCollection();
        firstState.IsAlive.Should().BeFalse("a disposed timer's entry is compacted away once stale entries outnumber live ones");
    }

    /// <summary>Each re-arming leaves a stale entry too: a timer moved once, then disposed, leaves two, and both are compacted away.</summary>
    [Fact]
    public void VirtualTimeProvider_TimersRearmedThenDisposedBeforeTheyAreDue_DoNotKeepTheirStateAlive()
    {
        var clock = new VirtualTimeProvider();
        using var keepAlive = clock.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(30), Timeout.InfiniteTimeSpan);

        var firstState = DisposeEarlyTimers(clock, rearm: true);

        ForceFullCollection();
        firstState.IsAlive.Should().BeFalse("the entries of re-armed and disposed timers are compacted away once stale entries outnumber live ones");
        clock.ActiveTimerCount.Should().Be(1);
    }

    /// <summary>Each re-arming leaves a stale entry too: a timer moved once, then disposed, leaves two, and both are compacted away.</summary>
    [Fact]
    public void DedicatedTimerTimeProvider_TimersRearmedThenDisposedBeforeTheyAreDue_DoNotKeepTheirStateAlive()
    {
        using var clock = new DedicatedTimerTimeProvider("rearmed-timer-memory");
        using var keepAlive = clock.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(30), Timeout.InfiniteTimeSpan);

        var firstState = DisposeEarlyTimers(clock, rearm: true);

        ForceFullCollection();
        firstState.IsAlive.Should().BeFalse("the entries of re-armed and disposed timers are compacted away once stale entries outnumber live ones");
    }

    [Fact]
    public void VirtualTimeProvider_ManyRearmedTimers_StillFireOnceEachAtTheirLastDueTime()
    {
        var clock = new VirtualTimeProvider();
        var fired = new List<int>();
        var timers = new List<ITimer>();
        for (var i = 0; i < 200; i++)
        {
            var id = i;
            timers.Add(clock.CreateTimer(_ => fired.Add(id), null, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan));
        }

        // Re-arm every timer many times (each re-arming leaves a stale entry; compaction runs along the way), the
        // even ones to fire in reverse order of their id, the odd ones never.
        for (var round = 0; round < 20; round++)
        {
            for (var i = 0; i < timers.Count; i++)
            {
                timers[i].Change(i % 2 == 0 ? TimeSpan.FromSeconds(1000 - i) : Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            }
        }

        clock.Advance(TimeSpan.FromHours(2));

        fired.Should().Equal(Enumerable.Range(0, 200).Where(i => i % 2 == 0).Reverse());
        clock.ActiveTimerCount.Should().Be(0);
    }

    /// <summary>Creates timers due in an hour, moves each to two hours when <paramref name="rearm"/>, and disposes each at once; returns a reference to the first one's state.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference DisposeEarlyTimers(TimeProvider clock, bool rearm = false)
    {
        WeakReference? first = null;
        for (var i = 0; i < Churn; i++)
        {
            var state = new byte[64];
            first ??= new WeakReference(state);
            var timer = clock.CreateTimer(static _ => { }, state, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan);
            if (rearm)
            {
                timer.Change(TimeSpan.FromHours(2), Timeout.InfiniteTimeSpan);
            }

            timer.Dispose();
        }

        return first!;
    }

    private static void ForceFullCollection()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }
}
