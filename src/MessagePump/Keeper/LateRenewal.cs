using System.Runtime.InteropServices;

namespace PriorityAsync.MessagePump;

/// <summary>
/// A renewal's lock time left when sent (<paramref name="Slack"/>) and what the renewal rule planned (<paramref name="Planned"/>):
/// how late the renewal was against its own plan (<see cref="LeaseKeeperStatistics.WorstRecentRenewal"/>).
/// </summary>
/// <param name="Slack">The lock time left when the renewal was sent.</param>
/// <param name="Planned">The lock time the rule planned to have left: the renewal buffer the lease was scheduled by; zero when unknown.</param>
[StructLayout(LayoutKind.Auto)]
public readonly record struct LateRenewal(TimeSpan Slack, TimeSpan Planned)
{
    /// <summary>The default rule's most planned slack (min(half the remaining lock, 10 s)), which the health check's thresholds are set for.</summary>
    public static TimeSpan FullBuffer { get; } = TimeSpan.FromSeconds(10);

    /// <summary>Gets how far <see cref="Planned"/>, when below <see cref="FullBuffer"/>, scales the thresholds down (1 otherwise, and when unknown).</summary>
    public double Scale => Planned > TimeSpan.Zero && Planned < FullBuffer ? Planned / FullBuffer : 1;

    /// <summary>Gets <see cref="Slack"/> scaled up to a <see cref="FullBuffer"/> plan: the slack a lease planned with 10 s would have had, equally late.</summary>
    public TimeSpan NormalizedSlack => Slack / Scale;
}
