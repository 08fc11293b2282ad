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
public static class MessagePumpMetrics
{
    /// <summary>Counter of messages received (OpenTelemetry <c>messaging.client.consumed.messages</c>).</summary>
    public const string ConsumedMessagesName = "messaging.client.consumed.messages";

    /// <summary>Histogram of handler durations in seconds (OpenTelemetry <c>messaging.process.duration</c>).</summary>
    public const string ProcessDurationName = "messaging.process.duration";

    /// <summary>Counter of messages completed.</summary>
    public const string CompletedMessagesName = "messagepump.messages.completed";

    /// <summary>Counter of messages abandoned.</summary>
    public const string AbandonedMessagesName = "messagepump.messages.abandoned";

    /// <summary>Counter of messages dead-lettered by handlers.</summary>
    public const string DeadLetteredMessagesName = "messagepump.messages.dead_lettered";

    /// <summary>Counter of messages deferred by handlers (Service Bus's defer: set aside, received again by sequence number).</summary>
    public const string DeferredMessagesName = "messagepump.messages.deferred";

    /// <summary>Counter of leases lost.</summary>
    public const string LeasesLostName = "messagepump.lease.lost";

    /// <summary>Counter of successful lease renewals.</summary>
    public const string RenewalsName = "messagepump.lease.renewals";

    /// <summary>Histogram of the lock time left, in seconds, when a renewal was sent: the safety margin the pump kept.</summary>
    public const string LeaseSlackName = "messagepump.lease.slack";

    /// <summary>Up-down counter of messages in flight.</summary>
    public const string InFlightName = "messagepump.messages.in_flight";

    /// <summary>The name of the histogram of renew round trips: how long the broker took to answer a renewal.</summary>
    public const string RenewDurationName = "messagepump.lease.renew.duration";
}
