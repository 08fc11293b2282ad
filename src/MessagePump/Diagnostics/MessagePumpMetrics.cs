namespace PriorityAsync.MessagePump;

/// <summary>
/// The instrument names of the <c>PriorityAsync.MessagePump</c> meter (<see cref="MessagePumpDiagnostics.MeterName"/>; the tags are constants of <see cref="MessagePumpDiagnostics"/>). Names follow the OpenTelemetry messaging
/// conventions where one exists (<c>messaging.*</c>); the pump's own instruments are named <c>messagepump.*</c>.
/// </summary>
/// <remarks>
/// Every measurement carries <see cref="MessagePumpDiagnostics.PumpTag"/> (the pump's name), <see cref="MessagePumpDiagnostics.MessagingSystemTag"/>
/// and, when the source names its queue, <see cref="MessagePumpDiagnostics.DestinationNameTag"/>. The <c>messaging.*</c>
/// instruments and the settlement counters also carry <see cref="MessagePumpDiagnostics.OperationNameTag"/>; a failed
/// handler's duration carries <see cref="MessagePumpDiagnostics.ErrorTypeTag"/>. A pump given <see cref="MessagePumpOptions.MeterFactory"/>
/// creates its meter there (same name); otherwise all pumps share one static meter.
/// </remarks>
internal static class MessagePumpMetrics
{
    /// <summary>Counter of messages received (OpenTelemetry <c>messaging.client.consumed.messages</c>).</summary>
    internal const string ConsumedMessagesName = "messaging.client.consumed.messages";

    /// <summary>Histogram of handler durations in seconds (OpenTelemetry <c>messaging.process.duration</c>).</summary>
    internal const string ProcessDurationName = "messaging.process.duration";

    /// <summary>Counter of messages completed.</summary>
    internal const string CompletedMessagesName = "messagepump.messages.completed";

    /// <summary>Counter of messages abandoned.</summary>
    internal const string AbandonedMessagesName = "messagepump.messages.abandoned";

    /// <summary>Counter of messages dead-lettered by handlers.</summary>
    internal const string DeadLetteredMessagesName = "messagepump.messages.dead_lettered";

    /// <summary>Counter of messages deferred by handlers (Service Bus's defer: set aside, received again by sequence number).</summary>
    internal const string DeferredMessagesName = "messagepump.messages.deferred";

    /// <summary>Counter of leases lost.</summary>
    internal const string LeasesLostName = "messagepump.lease.lost";

    /// <summary>Counter of successful lease renewals.</summary>
    internal const string RenewalsName = "messagepump.lease.renewals";

    /// <summary>Histogram of the lock time left, in seconds, when a renewal was sent: the safety margin the pump kept.</summary>
    internal const string LeaseSlackName = "messagepump.lease.slack";

    /// <summary>
    /// Histogram of the lock time left, in seconds, when a message reached its handler (the hand-off headroom): how
    /// much of the lock the receive, the admission and the wait for the processing lane left to the handler. A message
    /// whose lock was gone by then records nothing here: it is not handed over (see <c>MessagePumpStatistics.ExpiredAtHandOff</c>).
    /// </summary>
    internal const string HandOffHeadroomName = "messagepump.lease.handoff.headroom";

    /// <summary>Up-down counter of messages in flight.</summary>
    internal const string InFlightName = "messagepump.messages.in_flight";

    /// <summary>The name of the histogram of renew round trips: how long the broker took to answer a renewal.</summary>
    internal const string RenewDurationName = "messagepump.lease.renew.duration";
}
