using System.Collections.Concurrent;
using System.Diagnostics.Tracing;

namespace PriorityAsync.Benchmarks.Allocations;

/// <summary>
/// A sampling allocation profile in process: the runtime's <c>GCAllocationTick</c> event fires about once per 100 KB
/// allocated and names the type whose allocation crossed the mark, so the samples per type are proportional to the
/// bytes allocated of that type.
/// </summary>
internal sealed class AllocationTickListener : EventListener
{
    private const EventKeywords GcKeyword = (EventKeywords)0x1;

    public ConcurrentDictionary<string, long> Samples { get; } = new(StringComparer.Ordinal);

    public bool Recording { get; set; }

    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        if (eventSource.Name == "Microsoft-Windows-DotNETRuntime")
        {
            EnableEvents(eventSource, EventLevel.Verbose, GcKeyword);
        }
    }

    protected override void OnEventWritten(EventWrittenEventArgs eventData)
    {
        if (!Recording || eventData.EventName is null || !eventData.EventName.StartsWith("GCAllocationTick", StringComparison.Ordinal) || eventData.PayloadNames is null)
        {
            return;
        }

        var index = eventData.PayloadNames.IndexOf("TypeName");
        var type = index >= 0 ? eventData.Payload?[index] as string ?? "?" : "?";
        Samples.AddOrUpdate(type, 1, static (_, n) => n + 1);
    }
}
