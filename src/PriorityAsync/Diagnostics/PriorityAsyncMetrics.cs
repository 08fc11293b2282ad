using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace PriorityAsync;

/// <summary>
/// The <c>PriorityAsync</c> meter and its instruments. Every measurement carries the tags
/// <c>priorityasync.scheduler</c> (the scheduler's name) and <c>priorityasync.lane</c> (the lane's name).
/// </summary>
/// <remarks>
/// Instruments: <c>priorityasync.lane.queue.length</c> (observable gauge, items waiting),
/// <c>priorityasync.lane.dispatched</c> (observable counter, items taken to run), <c>priorityasync.lane.wait.duration</c>
/// (histogram, seconds from enqueue to start), <c>priorityasync.lane.slice.duration</c> (histogram, seconds one item
/// held its thread), <c>priorityasync.lane.stalls</c> (counter, slices at or over the stall threshold) and
/// <c>priorityasync.lane.rejected</c> (counter, work that reached a lane after its scheduler stopped, tagged with
/// <c>priorityasync.work.kind</c>; it ran on the thread pool).
/// Queue length and dispatches are observed from the lanes' own counts when a listener collects, so they cost the
/// dispatch path nothing; the histograms and the stall counter are measured only while a listener enables them.
/// </remarks>
public static class PriorityAsyncMetrics
{
    /// <summary>The name of the meter.</summary>
    public const string MeterName = "PriorityAsync";

    /// <summary>The tag holding the scheduler's name.</summary>
    internal const string SchedulerTag = "priorityasync.scheduler";

    /// <summary>The tag holding the lane's name.</summary>
    internal const string LaneTag = "priorityasync.lane";

    /// <summary>The tag holding the kind of rejected work (<c>continuation</c>, <c>post</c>, <c>task</c>, <c>timer</c>).</summary>
    internal const string KindTag = "priorityasync.work.kind";

    private static readonly Meter Meter = new(MeterName, typeof(PriorityAsyncMetrics).Assembly.GetName().Version?.ToString());

    private static readonly Lock LiveGate = new();
    private static readonly List<WeakReference<PriorityScheduler>> LiveSchedulers = [];

    internal static readonly ObservableGauge<long> QueueLength =
        Meter.CreateObservableGauge("priorityasync.lane.queue.length", () => Observe(lane => lane.QueueLength), "{item}", "Items waiting in a lane.");

    internal static readonly ObservableCounter<long> Dispatched =
        Meter.CreateObservableCounter("priorityasync.lane.dispatched", () => Observe(lane => lane.DispatchedCount), "{item}", "Items a lane has taken to run.");

    internal static readonly Histogram<double> WaitDuration =
        Meter.CreateHistogram<double>("priorityasync.lane.wait.duration", "s", "Time from enqueue to the start of an item.");

    internal static readonly Histogram<double> SliceDuration =
        Meter.CreateHistogram<double>("priorityasync.lane.slice.duration", "s", "Time one item held its thread.");

    internal static readonly Counter<long> Stalls =
        Meter.CreateCounter<long>("priorityasync.lane.stalls", "{stall}", "Slices that reached the stall threshold.");

    internal static readonly Counter<long> Rejected =
        Meter.CreateCounter<long>("priorityasync.lane.rejected", "{item}", "Work that reached a lane after its scheduler stopped and ran on the thread pool instead.");

    /// <summary>Makes a scheduler's lanes observable by the queue-length and dispatched instruments.</summary>
    internal static void Register(PriorityScheduler scheduler)
    {
        lock (LiveGate)
        {
            LiveSchedulers.RemoveAll(r => !r.TryGetTarget(out _));
            LiveSchedulers.Add(new WeakReference<PriorityScheduler>(scheduler));
        }
    }

    /// <summary>Stops observing a scheduler that has finished.</summary>
    internal static void Unregister(PriorityScheduler scheduler)
    {
        lock (LiveGate)
        {
            LiveSchedulers.RemoveAll(r => !r.TryGetTarget(out var live) || ReferenceEquals(live, scheduler));
        }
    }

    internal static TagList Tags(Lane lane) => new()
    {
        { SchedulerTag, lane.Scheduler.Name },
        { LaneTag, lane.Name },
    };

    internal static string KindName(RejectedWorkKind kind) => kind switch
    {
        RejectedWorkKind.Continuation => "continuation",
        RejectedWorkKind.Post => "post",
        RejectedWorkKind.Task => "task",
        _ => "timer",
    };

    /// <summary>One measurement per lane of every live scheduler; runs only when a listener collects.</summary>
    private static List<Measurement<long>> Observe(Func<Lane, long> value)
    {
        PriorityScheduler[] schedulers;
        lock (LiveGate)
        {
            schedulers = [.. LiveSchedulers.Select(r => r.TryGetTarget(out var s) ? s : null).OfType<PriorityScheduler>()];
        }

        var measurements = new List<Measurement<long>>();
        foreach (var scheduler in schedulers)
        {
            foreach (var lane in scheduler.Lanes)
            {
                measurements.Add(new Measurement<long>(value(lane), Tags(lane)));
            }
        }

        return measurements;
    }
}
