using System.Diagnostics;

namespace PriorityAsync.MessagePump;

/// <summary>
/// One pump's metrics and spans: its instruments, and the tags every measurement carries (the pump's name, the
/// messaging system and the queue). The pump calls one method per event; each costs a check when nobody listens.
/// </summary>
internal sealed class PumpTelemetry
{
    /// <summary>The pump's activity source, shared by every pump.</summary>
    internal static readonly ActivitySource Source = new(
        MessagePumpDiagnostics.ActivitySourceName, typeof(PumpTelemetry).Assembly.GetName().Version?.ToString());

    private readonly PumpInstruments _instruments;
    private readonly string _pump;
    private readonly string _system;
    private readonly string? _destination;

    public PumpTelemetry(string pump, IMessageSource source, PumpInstruments instruments)
    {
        _pump = pump;
        _system = SafeSystem(source);
        _destination = SafeDestination(source);
        _instruments = instruments;
    }

    public void Received()
    {
        if (_instruments.Consumed.Enabled)
        {
            _instruments.Consumed.Add(1, Tags(MessagePumpDiagnostics.ReceiveOperation));
        }

        if (_instruments.InFlight.Enabled)
        {
            _instruments.InFlight.Add(1, Tags());
        }
    }

    public void Finished()
    {
        if (_instruments.InFlight.Enabled)
        {
            _instruments.InFlight.Add(-1, Tags());
        }
    }

    public void Processed(TimeSpan duration, Exception? failure)
    {
        if (!_instruments.ProcessDuration.Enabled)
        {
            return;
        }

        var tags = Tags(MessagePumpDiagnostics.ProcessOperation);
        if (failure is not null)
        {
            tags.Add(MessagePumpDiagnostics.ErrorTypeTag, ErrorType(failure));
        }

        _instruments.ProcessDuration.Record(duration.TotalSeconds, tags);
    }

    public void Settled(Settlement settlement)
    {
        var (counter, operation) = settlement switch
        {
            Settlement.Complete => (_instruments.Completed, MessagePumpDiagnostics.CompleteOperation),
            Settlement.Abandon => (_instruments.Abandoned, MessagePumpDiagnostics.AbandonOperation),
            _ => (_instruments.DeadLettered, MessagePumpDiagnostics.DeadLetterOperation),
        };
        if (counter.Enabled)
        {
            counter.Add(1, Tags(operation));
        }
    }

    public void Renewed(TimeSpan slack, TimeSpan roundTrip)
    {
        var tags = Tags();
        _instruments.Renewals.Add(1, tags);
        _instruments.LeaseSlack.Record(slack.TotalSeconds, tags);
        _instruments.RenewDuration.Record(roundTrip.TotalSeconds, tags);
    }

    public void LeaseLost() => _instruments.LeasesLost.Add(1, Tags());

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
        var tags = new TagList
        {
            { MessagePumpDiagnostics.PumpTag, _pump },
            { MessagePumpDiagnostics.MessagingSystemTag, _system },
            { MessagePumpDiagnostics.OperationNameTag, MessagePumpDiagnostics.ProcessOperation },
            { MessagePumpDiagnostics.OperationTypeTag, MessagePumpDiagnostics.ProcessOperation },
            { MessagePumpDiagnostics.MessageIdTag, message.MessageId },
            { MessagePumpDiagnostics.DeliveryCountTag, message.DeliveryCount },
        };
        if (_destination is not null)
        {
            tags.Add(MessagePumpDiagnostics.DestinationNameTag, _destination);
        }

        return Source.StartActivity(
            _destination is null ? MessagePumpDiagnostics.ProcessOperation : $"{MessagePumpDiagnostics.ProcessOperation} {_destination}",
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

        var tags = new TagList
        {
            { MessagePumpDiagnostics.PumpTag, _pump },
            { MessagePumpDiagnostics.MessagingSystemTag, _system },
            { MessagePumpDiagnostics.OperationNameTag, MessagePumpDiagnostics.ReceiveOperation },
            { MessagePumpDiagnostics.OperationTypeTag, MessagePumpDiagnostics.ReceiveOperation },
            { MessagePumpDiagnostics.BatchMessageCountTag, messages.Count },
        };
        if (_destination is not null)
        {
            tags.Add(MessagePumpDiagnostics.DestinationNameTag, _destination);
        }

        var previous = Activity.Current;
        Activity.Current = null;
        try
        {
            Source.StartActivity(
                _destination is null ? MessagePumpDiagnostics.ReceiveOperation : $"{MessagePumpDiagnostics.ReceiveOperation} {_destination}",
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

    /// <summary>The tags of every measurement, plus the operation's name when given.</summary>
    private TagList Tags(string? operation = null)
    {
        var tags = new TagList
        {
            { MessagePumpDiagnostics.PumpTag, _pump },
            { MessagePumpDiagnostics.MessagingSystemTag, _system },
        };
        if (_destination is not null)
        {
            tags.Add(MessagePumpDiagnostics.DestinationNameTag, _destination);
        }

        if (operation is not null)
        {
            tags.Add(MessagePumpDiagnostics.OperationNameTag, operation);
        }

        return tags;
    }

    private static string SafeSystem(IMessageSource source) =>
        string.IsNullOrWhiteSpace(source.MessagingSystem) ? MessagePumpDiagnostics.UnknownSystem : source.MessagingSystem;

    private static string? SafeDestination(IMessageSource source) =>
        string.IsNullOrWhiteSpace(source.DestinationName) ? null : source.DestinationName;
}
