namespace PriorityAsync.Reliability.Tests.Support;

/// <summary>
/// Tests that measure the managed heap: <see cref="GC.GetTotalMemory(bool)"/> is process-wide, so they run alone,
/// after the parallel tests, or the other tests' allocations would show up as growth (a 100 000-message soak once
/// measured 25 to 71 MiB beside the scheduler stress tests, 11 MiB flat alone).
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class HeapMeasurementCollection
{
    /// <summary>The collection's name.</summary>
    public const string Name = "Heap measurement";
}
