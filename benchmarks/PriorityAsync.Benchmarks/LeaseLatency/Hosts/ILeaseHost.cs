namespace PriorityAsync.Benchmarks.LeaseLatency.Hosts;

/// <summary>Where one harness cell runs its processors and its lease loop: a scheduler under test.</summary>
internal interface ILeaseHost : IDisposable
{
    /// <summary>Gets the clock the lease loop's delays use (the scheduler's own when it has one).</summary>
    TimeProvider TimeProvider { get; }

    /// <summary>Starts a CPU-heavy processor (its awaits stay where it started: the processing lane or the loop).</summary>
    Task StartProcessor(Func<Task> processor);

    /// <summary>Starts the lease-renewal loop (in the lease lane where there is one).</summary>
    Task StartLeaseLoop(Func<Task> leaseLoop);
}
