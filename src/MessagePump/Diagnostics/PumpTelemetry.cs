using System.Diagnostics;

namespace PriorityAsync.MessagePump;

/// <summary>
/// One pump's metrics and spans: its instruments, and the tags every measurement carries (the pump's name, the
/// messaging system and the queue). <see cref="PumpEvents"/> calls one method per event; each costs a check when nobody listens.
/// </summary>
internal sealed partial class PumpTelemetry
{
    /// <summary>The pump's activity source, shared by every pump.</summary>
    internal static readonly ActivitySource Source = new(
        MessagePumpDiagnostics.ActivitySourceName, typeof(PumpTelemetry).Assembly.GetName().Version?.ToString());

    private readonly PumpInstruments _instruments;
    private readonly string _pump;
    private readonly string _system;
    private readonly string? _destination;

    public PumpTelemetry(string pump, IMessageSource? source, PumpInstruments instruments)
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

    public void Settled(SettlementKind settlement)
    {
        var (counter, operation) = settlement switch
        {
            SettlementKind.Complete => (_instruments.Completed, MessagePumpDiagnostics.CompleteOperation),
            SettlementKind.Abandon => (_instruments.Abandoned, MessagePumpDiagnostics.AbandonOperation),
            SettlementKind.Defer => (_instruments.Deferred, MessagePumpDiagnostics.DeferOperation),
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

    public void HandedOff(TimeSpan headroom) => _instruments.HandOffHeadroom.Record(headroom.TotalSeconds, Tags());

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

    private static string SafeSystem(IMessageSource? source) =>
        source is null || string.IsNullOrWhiteSpace(source.MessagingSystem) ? MessagePumpDiagnostics.UnknownSystem : source.MessagingSystem;

    private static string? SafeDestination(IMessageSource? source) =>
        source is null || string.IsNullOrWhiteSpace(source.DestinationName) ? null : source.DestinationName;
}
