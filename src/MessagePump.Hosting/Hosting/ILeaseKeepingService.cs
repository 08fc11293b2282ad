namespace PriorityAsync.MessagePump.Hosting;

/// <summary>
/// A service that keeps leases with one or more <see cref="LeaseKeeper"/>s: a hosted pump, a hosted processor, or one
/// of your own. The lease health check (<c>AddLeaseHealthCheck</c>) judges every keeper and pump of every such service in the
/// container, registered as <see cref="Microsoft.Extensions.Hosting.IHostedService"/> or as this interface, beside a
/// registered <see cref="LeaseKeeper"/>.
/// </summary>
public interface ILeaseKeepingService
{
    /// <summary>
    /// Gets the keepers the service runs now beside its pumps (a pump's own keeper is judged through
    /// <see cref="MessagePumps"/>), each named by <see cref="LeaseKeeper.Name"/> in the health check's description;
    /// empty while the service is not running (before its start, after its stop), and for a service that runs only pumps.
    /// </summary>
    IReadOnlyList<LeaseKeeper> LeaseKeepers { get; }

    /// <summary>
    /// Gets the pumps the service runs now, whose leases (<see cref="PriorityMessagePump.GetLeaseStatistics"/>) and
    /// receives (a source that cannot receive: <see cref="LeaseHealthCheckOptions.ReceiveFailingDegradedAfter"/>) the
    /// health check judges, each named by <see cref="PriorityMessagePump.Name"/>; empty while the service is not
    /// running, and by default (a service that keeps leases without a pump).
    /// </summary>
    IReadOnlyList<PriorityMessagePump> MessagePumps => [];
}
