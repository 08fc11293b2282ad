using System.Diagnostics;

namespace PriorityAsync.MessagePump;

internal sealed partial class PumpTelemetry
{
    /// <summary>
    /// Starts the process span of one delivery, kind consumer, and makes it <see cref="Activity.Current"/> for the
    /// caller (the handler runs inside it). Its parent is the producer's context from the message's
    /// <c>traceparent</c>/<c>tracestate</c> headers, which it also links to, as the messaging conventions ask; with no
    /// producer context it is a root span, never a child of whatever activity was current when the pump started; and
    /// without a span the handler runs with no current activity.
    /// </summary>
    /// <returns>The span, or <see langword="null"/> when nobody listens or the sampler declined it.</returns>
    public Activity? StartProcess(ILeasedMessage message)
    {
        // The receive loop's ambient activity (whatever was current at StartAsync, a host's for example) is not this
        // message's: the handler never runs inside it, whether or not anyone listens to the pump's spans.
        if (Activity.Current is not null)
        {
            Activity.Current = null;
        }

        if (!Source.HasListeners())
        {
            return null;
        }

        try
        {
            return StartProcessSpan(message);
        }
        catch (Exception)
        {
            // A throwing listener, propagator or Headers getter must not keep the handler from running.
            Activity.Current = null;
            return null;
        }
    }

    private Activity? StartProcessSpan(ILeasedMessage message)
    {
        var producer = ProducerContext(message);
        var tags = SpanTags(
            MessagePumpDiagnostics.ProcessOperation,
            new(MessagePumpDiagnostics.MessageIdTag, message.MessageId),
            new(MessagePumpDiagnostics.DeliveryCountTag, message.DeliveryCount));
        return Source.StartActivity(
            SpanName(MessagePumpDiagnostics.ProcessOperation),
            ActivityKind.Consumer,
            producer ?? default,
            tags,
            producer is { } context ? [new ActivityLink(context)] : null);
    }

    /// <summary>The wall-clock time a receive call is sent, when a listener may want its span; otherwise <see langword="null"/>.</summary>
    public static DateTimeOffset? ReceiveSent() => Source.HasListeners() ? DateTimeOffset.UtcNow : null;

    /// <summary>
    /// Records the receive span of a call that returned messages, kind client, from <paramref name="sent"/> to now, with
    /// <c>messaging.batch.message_count</c> and a link to each message's producer context. A root span; an empty
    /// receive (an idle poll) records none.
    /// </summary>
    public void Received(DateTimeOffset? sent, IReadOnlyList<ILeasedMessage> messages)
    {
        if (sent is not { } start || messages.Count == 0 || !Source.HasListeners())
        {
            return;
        }

        List<ActivityLink>? links = null;
        foreach (var message in messages)
        {
            if (message is not null && ProducerContext(message) is { } producer)
            {
                (links ??= []).Add(new ActivityLink(producer));
            }
        }

        var tags = SpanTags(MessagePumpDiagnostics.ReceiveOperation, new KeyValuePair<string, object?>(MessagePumpDiagnostics.BatchMessageCountTag, messages.Count));

        var previous = Activity.Current;
        Activity.Current = null;
        try
        {
            Source.StartActivity(
                SpanName(MessagePumpDiagnostics.ReceiveOperation),
                ActivityKind.Client,
                default(ActivityContext),
                tags,
                links,
                start)?.Stop();
        }
        catch (Exception)
        {
            // A throwing listener must not cost the received messages their processing.
        }
        finally
        {
            Activity.Current = previous;
        }
    }

    /// <summary>Ends a process span: with <see cref="ActivityStatusCode.Error"/>, <c>error.type</c> and the exception when the handler failed.</summary>
    public static void StopProcess(Activity? activity, Exception? failure)
    {
        if (activity is null)
        {
            return;
        }

        try
        {
            if (failure is not null)
            {
                activity.SetStatus(ActivityStatusCode.Error, failure.Message);
                activity.SetTag(MessagePumpDiagnostics.ErrorTypeTag, ErrorType(failure));
                activity.AddException(failure);
            }

            activity.Stop();
        }
        catch (Exception)
        {
            // A throwing listener must not keep the message from being settled.
            Activity.Current = null;
        }
    }

    /// <summary>The producer's context read from the message's headers by <see cref="DistributedContextPropagator.Current"/>, if any.</summary>
    internal static ActivityContext? ProducerContext(ILeasedMessage message)
    {
        try
        {
            if (message.Headers is not { Count: > 0 } headers)
            {
                return null;
            }

            DistributedContextPropagator.Current.ExtractTraceIdAndState(
                headers,
                static (object? carrier, string name, out string? value, out IEnumerable<string>? values) =>
                {
                    values = null;
                    value = ((IReadOnlyDictionary<string, string>)carrier!).TryGetValue(name, out var found) ? found : null;
                },
                out var traceParent,
                out var traceState);
            return ActivityContext.TryParse(traceParent, traceState, isRemote: true, out var context) ? context : null;
        }
        catch (Exception)
        {
            return null; // an adapter's Headers or a custom propagator failed: the span has no producer context
        }
    }

    /// <summary>The <c>error.type</c> of an exception: its type's full name.</summary>
    internal static string ErrorType(Exception failure) => failure.GetType().FullName ?? failure.GetType().Name;

    /// <summary>A span's name: the operation, then the queue when the source names it.</summary>
    private string SpanName(string operation) => _destination is null ? operation : $"{operation} {_destination}";

    /// <summary>The tags of a span, in this order: the pump, the system, the operation's name and type, <paramref name="extra"/>, then the queue when the source names it.</summary>
    private TagList SpanTags(string operation, params ReadOnlySpan<KeyValuePair<string, object?>> extra)
    {
        var tags = new TagList
        {
            { MessagePumpDiagnostics.PumpTag, _pump },
            { MessagePumpDiagnostics.MessagingSystemTag, _system },
            { MessagePumpDiagnostics.OperationNameTag, operation },
            { MessagePumpDiagnostics.OperationTypeTag, operation },
        };
        foreach (var tag in extra)
        {
            tags.Add(tag);
        }

        if (_destination is not null)
        {
            tags.Add(MessagePumpDiagnostics.DestinationNameTag, _destination);
        }

        return tags;
    }
}
