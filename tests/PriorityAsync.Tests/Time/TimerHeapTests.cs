namespace PriorityAsync.Tests.Time;

/// <summary>
/// The timer heap both time providers keep: the earliest live arming first, stale entries dropped as they surface, and
/// the heap rebuilt once stale entries (at least 64 of them) outnumber the live ones, so its memory follows the timers
/// alive rather than the timers ever armed.
/// </summary>
public class TimerHeapTests
{
    [Fact]
    public void Compacts_WhenTheSixtyFourthStaleEntryOutnumbersTheLive()
    {
        var (heap, timers) = Armed(100);

        Disarm(heap, timers.Take(63));
        heap.EntryCount.Should().Be(100, "63 stale entries are below the minimum worth a rebuild");

        Disarm(heap, timers.Skip(63).Take(1));
        heap.EntryCount.Should().Be(36, "the 64th stale entry of 100 triggers the rebuild, which keeps the 36 live ones");
        heap.CountArmed().Should().Be(36);
    }

    [Fact]
    public void NeverCompacts_BelowSixtyFourStaleEntries_HoweverFewAreLive()
    {
        var (heap, timers) = Armed(64);

        Disarm(heap, timers.Take(63));

        heap.EntryCount.Should().Be(64, "a rebuild of a heap this small costs more than its stale entries");
        heap.TryPeekArmed(out var first, out var due).Should().BeTrue();
        first.Should().BeSameAs(timers[63]);
        due.Should().Be(63);
    }

    [Fact]
    public void NeverCompacts_WhileStaleEntriesAreHalfOrFewer()
    {
        var (heap, timers) = Armed(200);

        Disarm(heap, timers.Take(100));
        heap.EntryCount.Should().Be(200, "100 stale entries of 200 do not outnumber the 100 live ones");

        Disarm(heap, timers.Skip(100).Take(1));
        heap.EntryCount.Should().Be(99);
    }

    [Fact]
    public void StaleEntriesDroppedByAPeek_NoLongerCountTowardsARebuild()
    {
        var (heap, timers) = Armed(200);
        Disarm(heap, timers.Take(10));

        heap.TryPeekArmed(out var first, out var due).Should().BeTrue();
        first.Should().BeSameAs(timers[10], "the ten earlier entries are stale");
        due.Should().Be(10);
        heap.EntryCount.Should().Be(190, "the peek dropped the stale entries above the first live one");

        Disarm(heap, timers.Skip(100).Take(95));
        heap.EntryCount.Should().Be(190, "95 stale entries of 190 are not more than the live ones");

        Disarm(heap, timers.Skip(195).Take(1));
        heap.EntryCount.Should().Be(94, "the 96th stale entry of 190 triggers the rebuild");
    }

    [Fact]
    public void IsFirst_OnlyForTheEarliestEntry()
    {
        var heap = new TimerHeap<TestTimer>();
        var early = new TestTimer();
        var late = new TestTimer();
        heap.IsFirst(early).Should().BeFalse("an empty heap has no first entry");

        early.Sequence = heap.Arm(early, due: 1);
        late.Sequence = heap.Arm(late, due: 2);

        heap.IsFirst(early).Should().BeTrue();
        heap.IsFirst(late).Should().BeFalse();
    }

    [Fact]
    public void TakeAllArmed_ReturnsTheLiveEntriesEarliestFirst_AndEmptiesTheHeap()
    {
        var (heap, timers) = Armed(5);
        Disarm(heap, [timers[1], timers[3]]);

        var taken = heap.TakeAllArmed();

        taken.Should().Equal([(timers[0], 0L), (timers[2], 2L), (timers[4], 4L)]);
        heap.EntryCount.Should().Be(0);
        heap.TryPeekArmed(out _, out _).Should().BeFalse();
    }

    /// <summary>A heap with <paramref name="count"/> timers armed at dues 0, 1, 2 ….</summary>
    private static (TimerHeap<TestTimer> Heap, TestTimer[] Timers) Armed(int count)
    {
        var heap = new TimerHeap<TestTimer>();
        var timers = Enumerable.Range(0, count).Select(_ => new TestTimer()).ToArray();
        for (var i = 0; i < count; i++)
        {
            timers[i].Sequence = heap.Arm(timers[i], due: i);
        }

        return (heap, timers);
    }

    /// <summary>Disarms each timer as its owner does: the timer forgets its arming, then the heap is told.</summary>
    private static void Disarm(TimerHeap<TestTimer> heap, IEnumerable<TestTimer> timers)
    {
        foreach (var timer in timers)
        {
            timer.Sequence = 0;
            heap.OnDisarmed();
        }
    }

    private sealed class TestTimer : IHeapTimer
    {
        public long Sequence { get; set; }

        public bool IsArmedFor(long sequence) => sequence == Sequence;
    }
}
