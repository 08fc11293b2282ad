namespace PriorityAsync.Benchmarks.LeaseLatency;

/// <summary>How a processor holds its thread for a slice.</summary>
internal enum SliceKind
{
    /// <summary>Busy-spinning: CPU work.</summary>
    Spin,

    /// <summary>Blocked in a sleep: a synchronous wait such as sync-over-async, using no CPU.</summary>
    Block,
}
