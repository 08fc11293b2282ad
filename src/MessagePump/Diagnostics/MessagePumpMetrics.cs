using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace PriorityAsync.Messaging;

/// <summary>
/// The <c>MessagePump</c> meter and its instrument names. Names follow the OpenTelemetry messaging conventions where
/// one exists; every measurement carries the tag <see cref="PumpTag"/> (the pump's name).
/// </summary>
public static class MessagePumpMetrics
{
    /// <summary>The name of the meter.</summary>
    public const string MeterName = "MessagePump";

    /// <summary>The tag holding the pump's name.</summary>
    public const string PumpTag = "messagepump.name";

    /// <summary>The OpenTelemetry tag holding the exception type of a failed handler, on <see cref="ProcessDurationName"/>.</summary>
    public const string ErrorTypeTag = "error.type";

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

    private static readonly Meter Meter = new(MeterName, typeof(MessagePumpMetrics).Assembly.GetName().Version?.ToString());

    internal static readonly Counter<long> Consumed = Meter.CreateCounter<long>(ConsumedMessagesName, "{message}", "Messages received.");

    internal static readonly Histogram<double> ProcessDuration = Meter.CreateHistogram<double>(ProcessDurationName, "s", "Duration of the message handler.");

    internal static readonly Counter<long> Completed = Meter.CreateCounter<long>(CompletedMessagesName, "{message}", "Messages completed.");

    internal static readonly Counter<long> Abandoned = Meter.CreateCounter<long>(AbandonedMessagesName, "{message}", "Messages abandoned.");

    internal static readonly Counter<long> DeadLettered = Meter.CreateCounter<long>(DeadLetteredMessagesName, "{message}", "Messages dead-lettered by handlers.");

    internal static readonly Counter<long> LeasesLost = Meter.CreateCounter<long>(LeasesLostName, "{lease}", "Leases lost.");

    internal static readonly Counter<long> Renewals = Meter.CreateCounter<long>(RenewalsName, "{renewal}", "Lease renewals.");

    internal static readonly Histogram<double> LeaseSlack = Meter.CreateHistogram<double>(LeaseSlackName, "s", "Lock time left when a renewal was sent.");

    internal static readonly Histogram<double> RenewDuration = Meter.CreateHistogram<double>(RenewDurationName, "s", "Round trip of a lease renewal.");

    internal static readonly UpDownCounter<long> InFlight = Meter.CreateUpDownCounter<long>(InFlightName, "{message}", "Messages in flight.");

    internal static TagList Tags(string pump) => new() { { PumpTag, pump } };
}
