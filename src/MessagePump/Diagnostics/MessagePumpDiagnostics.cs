using System.Diagnostics;

namespace PriorityAsync.MessagePump;

/// <summary>
/// The names a <see cref="PriorityMessagePump"/> publishes its telemetry under: the meter (see <see cref="MessagePumpMetrics"/>
/// for its instruments), the activity source of its spans, and the OpenTelemetry messaging attributes both carry.
/// </summary>
/// <remarks>
/// Subscribe with OpenTelemetry (<c>AddMeter(MessagePumpDiagnostics.MeterName)</c>,
/// <c>AddSource(MessagePumpDiagnostics.ActivitySourceName)</c>) or with a <see cref="System.Diagnostics.Metrics.MeterListener"/>
/// and an <see cref="System.Diagnostics.ActivityListener"/>. Nothing is measured or traced while nobody listens.
/// </remarks>
public static class MessagePumpDiagnostics
{
    /// <summary>The name of the pump's meter: <c>PriorityAsync.MessagePump</c>, the package's name.</summary>
    public const string MeterName = "PriorityAsync.MessagePump";

    /// <summary>The name of the pump's activity source: <c>PriorityAsync.MessagePump</c>, the package's name.</summary>
    public const string ActivitySourceName = "PriorityAsync.MessagePump";

    /// <summary>The tag holding the pump's name (<see cref="MessagePumpOptions.Name"/>), on every measurement and span.</summary>
    public const string PumpTag = "messagepump.name";

    /// <summary>The OpenTelemetry attribute naming the messaging system (<see cref="IMessageSource.MessagingSystem"/>).</summary>
    internal const string MessagingSystemTag = "messaging.system";

    /// <summary>
    /// The OpenTelemetry attribute naming the queue (<see cref="IMessageSource.DestinationName"/>); absent when the source
    /// does not name it.
    /// </summary>
    internal const string DestinationNameTag = "messaging.destination.name";

    /// <summary>
    /// The OpenTelemetry attribute naming the operation: <see cref="ReceiveOperation"/>, <see cref="ProcessOperation"/>,
    /// <see cref="CompleteOperation"/>, <see cref="AbandonOperation"/> or <see cref="DeadLetterOperation"/>.
    /// </summary>
    internal const string OperationNameTag = "messaging.operation.name";

    /// <summary>The OpenTelemetry attribute giving the operation's type (<c>receive</c>, <c>process</c>, <c>settle</c>), on spans.</summary>
    internal const string OperationTypeTag = "messaging.operation.type";

    /// <summary>The OpenTelemetry attribute holding the message's identifier, on spans.</summary>
    internal const string MessageIdTag = "messaging.message.id";

    /// <summary>The OpenTelemetry attribute holding how many messages one receive returned, on receive spans.</summary>
    internal const string BatchMessageCountTag = "messaging.batch.message_count";

    /// <summary>The tag holding the message's delivery count (1 on the first delivery), on spans.</summary>
    internal const string DeliveryCountTag = "messagepump.delivery_count";

    /// <summary>The OpenTelemetry attribute holding the exception type of a failed handler (its full name).</summary>
    internal const string ErrorTypeTag = "error.type";

    /// <summary>The operation name of receiving (<see cref="MessagePumpMetrics.ConsumedMessagesName"/>).</summary>
    internal const string ReceiveOperation = "receive";

    /// <summary>The operation name of running the handler (<see cref="MessagePumpMetrics.ProcessDurationName"/>, the process span).</summary>
    internal const string ProcessOperation = "process";

    /// <summary>The operation name of completing a message.</summary>
    internal const string CompleteOperation = "complete";

    /// <summary>The operation name of abandoning a message.</summary>
    internal const string AbandonOperation = "abandon";

    /// <summary>The operation name of dead-lettering a message.</summary>
    internal const string DeadLetterOperation = "dead_letter";

    /// <summary>The operation name of deferring a message (Service Bus's defer).</summary>
    internal const string DeferOperation = "defer";

    /// <summary>The <see cref="IMessageSource.MessagingSystem"/> of a source that does not name its system.</summary>
    internal const string UnknownSystem = "unknown";

    /// <summary>
    /// Writes the trace context of <paramref name="activity"/> (by default <see cref="Activity.Current"/>) into a
    /// message's headers with <see cref="DistributedContextPropagator.Current"/> (W3C <c>traceparent</c> and
    /// <c>tracestate</c> by default), so that the pump's process span of that message joins the producer's trace.
    /// </summary>
    /// <param name="headers">The headers of the message to send; entries the propagator writes are replaced.</param>
    /// <param name="activity">The producer's activity; <see langword="null"/> for <see cref="Activity.Current"/>.</param>
    /// <returns><paramref name="headers"/>, unchanged when there is no activity.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="headers"/> is null.</exception>
    public static IDictionary<string, string> InjectTraceContext(IDictionary<string, string> headers, Activity? activity = null)
    {
        ArgumentNullException.ThrowIfNull(headers);
        activity ??= Activity.Current;
        if (activity is not null)
        {
            DistributedContextPropagator.Current.Inject(
                activity,
                headers,
                static (carrier, name, value) =>
                {
                    if (value is not null)
                    {
                        ((IDictionary<string, string>)carrier!)[name] = value;
                    }
                });
        }

        return headers;
    }
}
