using System.Text.Json.Serialization;
using LeaseSimulation.Tracking;

namespace LeaseSimulation.Results;

/// <summary>The outcome of one run; the JSON fields of <c>--json</c>.</summary>
public sealed record SimulationResult
{
    /// <summary>Gets the context (<c>single-thread</c>, <c>thread-pool</c>, <c>starved-pool</c>).</summary>
    public required string Context { get; init; }

    /// <summary>Gets the strategy name.</summary>
    public required string Strategy { get; init; }

    /// <summary>Gets who judged the leases (<c>memory</c>, the embedded default, or <c>postgres</c>).</summary>
    public string Broker { get; init; } = "memory";

    /// <summary>
    /// Gets the latency, in milliseconds of scenario time, that the in-memory broker added to every receive, renew and
    /// settle call of this run; 0 for strategies that do not go through it (only the pump does).
    /// </summary>
    public double BrokerLatencyMs { get; init; }

    /// <summary>Gets the clock (<c>virtual</c> or <c>real</c>).</summary>
    public required string Clock { get; init; }

    /// <summary>Gets the CPU time per operation, in milliseconds.</summary>
    public required double CpuMs { get; init; }

    /// <summary>Gets the number of messages in the queue at the start.</summary>
    public required int Messages { get; init; }

    /// <summary>Gets the number of messages completed with a valid lease.</summary>
    public required int Completed { get; init; }

    /// <summary>Gets the number of messages whose lease expired.</summary>
    public required int Lost { get; init; }

    /// <summary>Gets the scenario time until the last message finished, in seconds.</summary>
    public required double TotalSeconds { get; init; }

    /// <summary>Gets the mean scenario time from receive to completion of the completed messages, in seconds.</summary>
    public required double MeanMessageSeconds { get; init; }

    /// <summary>Gets the worst renewal lateness (time since the previous renewal minus the renew interval), in milliseconds.</summary>
    public required double MaxLeaseLatenessMs { get; init; }

    /// <summary>Gets the single-thread CPU limit, messages × loops × CPU, in seconds.</summary>
    public required double CpuLimitSeconds { get; init; }

    /// <summary>
    /// Gets the least scenario time in which the run could complete every message, in seconds: the largest of the CPU
    /// work, the receive chain and one message's path (see <c>LowerBound</c> and docs/simulation.md).
    /// </summary>
    public double LowerBoundSeconds { get; init; }

    /// <summary>Gets which path of the lower bound binds: <c>cpu</c>, <c>receive</c> or <c>path</c>.</summary>
    public string? LowerBoundBinding { get; init; }

    /// <summary>Gets the CPU mode in force on the real clock (<c>work</c>, <c>spin</c>, <c>sleep</c>); absent on the virtual clock.</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? CpuMode { get; init; }

    /// <summary>Gets whether the run was stopped at its deadline (see <c>SimulationSettings.Deadline</c>).</summary>
    public bool StoppedAtDeadline { get; init; }

    /// <summary>Gets how many messages were still in flight at the deadline; they are counted in <see cref="Lost"/>.</summary>
    public int AbandonedAtDeadline { get; init; }

    /// <summary>Gets the total time over the single-thread CPU limit.</summary>
    [JsonIgnore]
    public double TotalOverLimit => CpuLimitSeconds > 0 ? TotalSeconds / CpuLimitSeconds : double.NaN;

    /// <summary>Gets the total time over the lower bound (below 1 only when messages were lost, so less work was done).</summary>
    [JsonIgnore]
    public double TotalOverLowerBound => LowerBoundSeconds > 0 ? TotalSeconds / LowerBoundSeconds : double.NaN;

    /// <summary>Gets the wall-clock time the run took.</summary>
    [JsonIgnore]
    public TimeSpan WallTime { get; init; }

    /// <summary>Gets how many deliveries the consumer received (<c>--broker servicebus</c>; <see langword="null"/> elsewhere).</summary>
    [System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)]
    public int? Deliveries { get; init; }

    /// <summary>Gets how many times a handler started processing a delivery (<c>--broker servicebus</c>).</summary>
    [System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)]
    public int? HandlerRuns { get; init; }

    /// <summary>Gets how many handler runs processed a message already processed once: redelivered after a lost lock (<c>--broker servicebus</c>).</summary>
    [System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)]
    public int? Duplicates { get; init; }

    /// <summary>Gets how many deliveries lost their lock (<c>--broker servicebus</c>): each is redelivered, or dead-lettered at the last delivery.</summary>
    [System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)]
    public int? LeasesLost { get; init; }

    /// <summary>Gets how many messages were dead-lettered after their last delivery lost its lock (<c>--broker servicebus</c>).</summary>
    [System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)]
    public int? DeadLettered { get; init; }

    /// <summary>Gets the renew calls the test broker answered (<c>--broker servicebus</c> without <c>--connection</c>).</summary>
    [System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)]
    public int? RenewCalls { get; init; }

    /// <summary>Gets the renew calls per lock duration of lock held, summed over deliveries (<c>--broker servicebus</c> without <c>--connection</c>): 2 is a renewal every half lock.</summary>
    [System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)]
    public double? RenewCallsPerLockDuration { get; init; }

    /// <summary>Gets the monitor's samples, every 3 s of scenario time.</summary>
    [JsonIgnore]
    public IReadOnlyList<TimelineSample> Timeline { get; init; } = [];
}
