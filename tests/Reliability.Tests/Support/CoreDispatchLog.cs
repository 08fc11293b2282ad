namespace PriorityAsync.Reliability.Tests.Support;

/// <summary>
/// Records, for every posted item, one global ticket when its post returned and one when it started and ended running,
/// so lost, duplicated, out-of-order and priority-inverted items can be found after the run.
/// </summary>
/// <remarks>
/// The dispatch rule that can be checked from outside, on a scheduler that runs one item at a time: when item X starts,
/// the item that ran just before it had ended, so X was dequeued after that end ticket B. Any item Y of a more urgent
/// lane whose post had returned before B was queued when X was chosen, so Y must have started before X.
/// </remarks>
internal sealed class CoreDispatchLog
{
    private long _clock;
    private readonly Entry[] _entries;
    private long _ranOrder;
    private readonly int[] _runSequence;

    public CoreDispatchLog(int capacity)
    {
        _entries = new Entry[capacity];
        _runSequence = new int[capacity];
        Array.Fill(_runSequence, -1);
    }

    public int Capacity => _entries.Length;

    public void Register(int id, int poster, int rank, int sequence) => _entries[id] = new Entry { Poster = poster, Rank = rank, Sequence = sequence, Posted = long.MaxValue };

    public void Posted(int id) => _entries[id].Posted = Interlocked.Increment(ref _clock);

    public void Ran(int id, int actualRank)
    {
        ref var entry = ref _entries[id];
        entry.Started = Interlocked.Increment(ref _clock);
        var runs = Interlocked.Increment(ref entry.Runs);
        entry.ActualRank = actualRank;
        if (runs == 1)
        {
            _runSequence[Interlocked.Increment(ref _ranOrder) - 1] = id;
        }

        entry.Ended = Interlocked.Increment(ref _clock);
    }

    public long RanCount => Volatile.Read(ref _ranOrder);

    /// <summary>Every registered item ran exactly once, in its lane.</summary>
    public void AssertExactlyOnce(int count)
    {
        var lost = 0;
        var duplicated = 0;
        var wrongLane = 0;
        for (var i = 0; i < count; i++)
        {
            var runs = Volatile.Read(ref _entries[i].Runs);
            lost += runs == 0 ? 1 : 0;
            duplicated += runs > 1 ? 1 : 0;
            wrongLane += runs >= 1 && _entries[i].ActualRank != _entries[i].Rank ? 1 : 0;
        }

        (lost, duplicated, wrongLane).Should().Be((0, 0, 0), "of {0} items none is lost, duplicated or run in another lane", count);
    }

    /// <summary>FIFO per (poster, lane): items a poster posted into one lane start in the order it posted them.</summary>
    public void AssertFifoPerPosterAndLane(int count)
    {
        var last = new Dictionary<(int Poster, int Rank), (int Sequence, long Started)>();
        foreach (var id in Enumerable.Range(0, count).OrderBy(i => _entries[i].Started))
        {
            var e = _entries[id];
            if (last.TryGetValue((e.Poster, e.Rank), out var previous))
            {
                e.Sequence.Should().BeGreaterThan(previous.Sequence, "poster {0}'s items in lane {1} run in posting order", e.Poster, e.Rank);
            }

            last[(e.Poster, e.Rank)] = (e.Sequence, e.Started);
        }
    }

    /// <summary>The dispatch rule of the remarks, for a scheduler that runs one item at a time.</summary>
    public void AssertDispatchRule(int count, int laneCount)
    {
        // Per lane: items ordered by post ticket, with the running maximum of their start tickets.
        var byLane = new (long[] Posted, long[] MaxStarted)[laneCount];
        for (var rank = 0; rank < laneCount; rank++)
        {
            var items = Enumerable.Range(0, count).Where(i => _entries[i].Rank == rank).OrderBy(i => _entries[i].Posted).ToArray();
            var posted = items.Select(i => _entries[i].Posted).ToArray();
            var maxStarted = new long[items.Length];
            long max = 0;
            for (var k = 0; k < items.Length; k++)
            {
                max = Math.Max(max, _entries[items[k]].Started);
                maxStarted[k] = max;
            }

            byLane[rank] = (posted, maxStarted);
        }

        var order = Enumerable.Range(0, count).OrderBy(i => _entries[i].Started).ToArray();
        var violations = 0;
        string? first = null;
        for (var k = 1; k < order.Length; k++)
        {
            var x = _entries[order[k]];
            var dequeuedAfter = _entries[order[k - 1]].Ended;
            for (var rank = 0; rank < x.Rank; rank++)
            {
                var (posted, maxStarted) = byLane[rank];
                var queued = LowerBound(posted, dequeuedAfter);
                if (queued > 0 && maxStarted[queued - 1] > x.Started)
                {
                    violations++;
                    first ??= $"item {order[k]} of lane {x.Rank} started at {x.Started} before an item of lane {rank} posted before {dequeuedAfter}";
                }
            }
        }

        violations.Should().Be(0, "no item starts while a more urgent one was already queued ({0})", first);
    }

    private static int LowerBound(long[] sorted, long value)
    {
        var index = Array.BinarySearch(sorted, value);
        return index >= 0 ? index : ~index;
    }

    private struct Entry
    {
        public int Poster;
        public int Rank;
        public int Sequence;
        public int ActualRank;
        public int Runs;
        public long Posted;
        public long Started;
        public long Ended;
    }
}
