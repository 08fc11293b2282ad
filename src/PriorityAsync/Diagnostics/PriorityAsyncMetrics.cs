using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace PriorityAsync;

/// <summary>
/// The <c>PriorityAsync</c> meter and its instruments. Every measurement carries the tags
/// <c>priorityasync.scheduler</c> (the scheduler's name) and <c>priorityasync.lane</c> (the lane's name).
/// </summary>
/// <remarks>
/// Instruments: <c>priorityasync.lane.queue.length</c> (up-down counter, items waiting),
/// <c>priorityasync.lane.dispatched</c> (counter, items run), <c>priorityasync.lane.wait.duration</c>
/// (histogram, seconds from enqueue to start), <c>priorityasync.lane.slice.duration</c> (histogram, seconds one item
/// held its thread) and <c>priorityasync.lane.stalls</c> (counter, slices at or over the stall threshold).
/// Nothing is measured while no listener is enabled for an instrument.
/// </remarks>
public static class PriorityAsyncMetrics
{
    /// <summary>The name of the meter.</summary>
    public const string MeterName = "PriorityAsync";

    /// <summary>The tag holding the scheduler's name.</summary>
    public const string SchedulerTag = "priorityasync.scheduler";

    /// <summary>The tag holding the lane's name.</summary>
    public const string LaneTag = "priorityasync.lane";

    private static readonly Meter Meter = new(MeterName, typeof(PriorityAsyncMetrics).Assembly.GetName().Version?.ToString());

    internal static readonly UpDownCounter<long> QueueLength =
        Meter.CreateUpDownCounter<long>("priorityasync.lane.queue.length", "{item}", "Items waiting in a lane.");

    internal static readonly Counter<long> Dispatched =
        Meter.CreateCounter<long>("priorityasync.lane.dispatched", "{item}", "Items a lane has run.");

    internal static readonly Histogram<double> WaitDuration =
        Meter.CreateHistogram<double>("priorityasync.lane.wait.duration", "s", "Time from enqueue to the start of an item.");

    internal static readonly Histogram<double> SliceDuration =
        Meter.CreateHistogram<double>("priorityasync.lane.slice.duration", "s", "Time one item held its thread.");

    internal static readonly Counter<long> Stalls =
        Meter.CreateCounter<long>("priorityasync.lane.stalls", "{stall}", "Slices that reached the stall threshold.");

    internal static TagList Tags(Lane lane) => new()
    {
        { SchedulerTag, lane.Scheduler.Name },
        { LaneTag, lane.Name },
    };
}
