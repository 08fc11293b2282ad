namespace PriorityAsync.Reliability.Tests.Core;

/// <summary>
/// Items posted from many threads into random lanes, each recorded when it runs: in a lane (with the lane it ran in)
/// or on the thread pool after a stop (rejected work). Tells lost, duplicated and misrouted items apart.
/// </summary>
internal sealed class PostingLoad
{
    private readonly int[] _runs;
    private readonly int[] _lanes;
    private readonly int[] _ranInLane;
    private readonly int[][] _order;
    private readonly int[] _orderCount;

    public PostingLoad(int posters, int itemsPerPoster)
    {
        Posters = posters;
        ItemsPerPoster = itemsPerPoster;
        _runs = new int[posters * itemsPerPoster];
        _lanes = new int[_runs.Length];
        _ranInLane = new int[_runs.Length];
        _order = [.. Enumerable.Range(0, posters * 3).Select(_ => new int[itemsPerPoster])];
        _orderCount = new int[posters * 3];
    }

    public int Posters { get; }

    public int ItemsPerPoster { get; }

    public int Total => _runs.Length;

    /// <summary>Posts every item of poster <paramref name="poster"/> into the lanes chosen by <paramref name="random"/>.</summary>
    public void Post(PriorityScheduler scheduler, int poster, Random random, Func<bool>? keepGoing = null)
    {
        for (var i = 0; i < ItemsPerPoster; i++)
        {
            if (keepGoing is not null && !keepGoing())
            {
                return;
            }

            var id = (poster * ItemsPerPoster) + i;
            var lane = random.Next(scheduler.Lanes.Count);
            _lanes[id] = lane;
            scheduler.Lanes[lane].SynchronizationContext.Post(static s => ((Item)s!).Run(), new Item(this, id, poster, lane));
        }
    }

    /// <summary>Gets how many posted items ran more than once (must be 0).</summary>
    public int Duplicated => _runs.Count(r => r > 1);

    /// <summary>Gets how many of the first <paramref name="posted"/> ids of each poster never ran.</summary>
    public int NeverRan(Func<int, int> postedBy) =>
        Enumerable.Range(0, Total).Count(id => _runs[id] == 0 && (id % ItemsPerPoster) < postedBy(id / ItemsPerPoster));

    /// <summary>Gets how many items ran on the thread pool (rejected after a stop).</summary>
    public int RanRejected => Enumerable.Range(0, Total).Count(id => _runs[id] == 1 && _ranInLane[id] == 0);

    /// <summary>Gets whether items of one poster ran in the order they were posted, lane by lane (one-thread schedulers).</summary>
    public bool FifoPerPosterAndLane()
    {
        for (var key = 0; key < _order.Length; key++)
        {
            for (var i = 1; i < _orderCount[key]; i++)
            {
                if (_order[key][i] <= _order[key][i - 1])
                {
                    return false;
                }
            }
        }

        return true;
    }

    private sealed class Item(PostingLoad load, int id, int poster, int lane)
    {
        public void Run()
        {
            Interlocked.Increment(ref load._runs[id]);
            if (PriorityScheduler.CurrentLane is { } current)
            {
                load._ranInLane[id] = current.Priority.Rank == lane ? 1 : -1;
                var key = (poster * 3) + lane;
                var slot = Interlocked.Increment(ref load._orderCount[key]) - 1;
                load._order[key][slot] = id;
            }
        }
    }
}
