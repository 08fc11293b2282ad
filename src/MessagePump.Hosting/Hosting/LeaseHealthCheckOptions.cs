namespace PriorityAsync.MessagePump.Hosting;

/// <summary>
/// Thresholds of the lease health check (<c>AddLeaseHealthCheck</c>), applied to each lease keeper it watches (the
/// registered <see cref="LeaseKeeper"/> and those of every hosted pump and processor) and to each hosted pump's
/// receives: the worst decides.
/// </summary>
public sealed class LeaseHealthCheckOptions
{
    /// <summary>
    /// Gets or sets the lock time left at renewal below which a keeper is <c>Degraded</c>: the least slack of its last
    /// <see cref="LeaseKeeper.SlackWindow"/> renewals. Defaults to 5 s (renewals are due with 10 s left; half of that
    /// gone means the lease lane ran late). Positive. A renewal planned with less than 10 s left (a lock under 20 s) is
    /// judged against this threshold scaled to its plan: 1.25 s for a 5 s lock, renewed with 2.5 s left.
    /// </summary>
    public TimeSpan DegradedSlack { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Gets or sets the lock time left at renewal below which a keeper is <c>Unhealthy</c>: one more such delay and
    /// leases are lost. Defaults to 1 s; positive, and below <see cref="DegradedSlack"/>. Scaled like
    /// <see cref="DegradedSlack"/> for a renewal planned with less than 10 s left (0.25 s for a 5 s lock).
    /// </summary>
    public TimeSpan UnhealthySlack { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Gets or sets how long after a lost lease a keeper stays <c>Degraded</c>. Defaults to 5 minutes; positive.
    /// </summary>
    public TimeSpan LostLeaseWindow { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>
    /// Gets or sets how long a pump's receives may fail, every one of them, before it is <c>Degraded</c> (the broker
    /// unreachable, the entity gone, rights missing: the pump logs each failure and retries). Defaults to 1 minute;
    /// positive.
    /// </summary>
    public TimeSpan ReceiveFailingDegradedAfter { get; set; } = TimeSpan.FromMinutes(1);

    /// <summary>
    /// Gets or sets how long a pump's receives may fail, every one of them, before it is <c>Unhealthy</c>. Defaults to
    /// 5 minutes; above <see cref="ReceiveFailingDegradedAfter"/>.
    /// </summary>
    public TimeSpan ReceiveFailingUnhealthyAfter { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>
    /// Gets or sets how far a pump's stop may run past its <see cref="MessagePumpOptions.ShutdownTimeout"/> (the
    /// abandons of the handlers still running then take a broker round trip) before it counts: a stop under way past
    /// its timeout by more is <c>Unhealthy</c>, one that ended so is <c>Degraded</c>
    /// (<see cref="MessagePumpStatistics.StopOverrun"/>). Defaults to 1 second; zero or positive.
    /// </summary>
    public TimeSpan StopOverrunTolerance { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Throws when a threshold breaks its rule; the exception names it.</summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole; ParamName names the offending threshold property.")]
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Usage", "CA2208:Instantiate argument exceptions correctly", Justification = "Validate checks the options object as a whole; ParamName names the offending threshold property.")]
    internal void Validate()
    {
        if (UnhealthySlack <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(UnhealthySlack), UnhealthySlack, "LeaseHealthCheckOptions.UnhealthySlack must be positive.");
        }

        if (DegradedSlack <= UnhealthySlack)
        {
            throw new ArgumentOutOfRangeException(nameof(DegradedSlack), DegradedSlack, "LeaseHealthCheckOptions.DegradedSlack must be above UnhealthySlack.");
        }

        if (LostLeaseWindow <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(LostLeaseWindow), LostLeaseWindow, "LeaseHealthCheckOptions.LostLeaseWindow must be positive.");
        }

        if (ReceiveFailingDegradedAfter <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveFailingDegradedAfter), ReceiveFailingDegradedAfter, "LeaseHealthCheckOptions.ReceiveFailingDegradedAfter must be positive.");
        }

        if (StopOverrunTolerance < TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(StopOverrunTolerance), StopOverrunTolerance, "LeaseHealthCheckOptions.StopOverrunTolerance must be zero or positive.");
        }

        if (ReceiveFailingUnhealthyAfter <= ReceiveFailingDegradedAfter)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveFailingUnhealthyAfter), ReceiveFailingUnhealthyAfter, "LeaseHealthCheckOptions.ReceiveFailingUnhealthyAfter must be above ReceiveFailingDegradedAfter.");
        }
    }
}
