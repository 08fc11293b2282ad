namespace PriorityAsync.MessagePump;

/// <summary>A snapshot of a <see cref="LeaseKeeper"/>'s accounting (<see cref="LeaseKeeper.GetStatistics"/>).</summary>
public sealed record LeaseKeeperStatistics
{
    /// <summary>Gets how many leases the keeper keeps now.</summary>
    public int Kept { get; init; }

    /// <summary>Gets how many renewals succeeded.</summary>
    public long Renewals { get; init; }

    /// <summary>
    /// Gets how many renew calls went to the broker: one per native batch (<see cref="IMessageSource.RenewsBatchesNatively"/>),
    /// otherwise one per message renewed, retries included.
    /// </summary>
    public long RenewCalls { get; init; }

    /// <summary>Gets how many leases were lost while kept.</summary>
    public long LeasesLost { get; init; }

    /// <summary>Gets when (on the keeper's clock) the last lease was lost, or <see langword="null"/> when none was.</summary>
    public DateTimeOffset? LastLeaseLostAt { get; init; }

    /// <summary>
    /// Gets the least lock time left when a renewal was sent, over the last <see cref="LeaseKeeper.SlackWindow"/> successful
    /// renewals; <see langword="null"/> before the first.
    /// </summary>
    public TimeSpan? MinRecentSlack { get; init; }

    /// <summary>
    /// Gets the recent renewal (of the last <see cref="LeaseKeeper.SlackWindow"/>) whose lock time left was the least
    /// against what its renewal rule planned (<see cref="LateRenewal.NormalizedSlack"/>); <see langword="null"/> before
    /// the first. What the lease health check judges: a 5 s lock renewed on time has 2.5 s left, a 60 s lock 10 s.
    /// </summary>
    public LateRenewal? WorstRecentRenewal { get; init; }
}
