using LeaseSimulation.Messages;
using LeaseSimulation.Running;
using PriorityAsync.MessagePump;

namespace LeaseSimulation.Consumers.Pump;

/// <summary>
/// The broker queue as the pump sees it: each receive is first an awaited IO delay of the scenario's receive time (as
/// in the seed), then takes the next broker message and records it with the run's tracker.
/// </summary>
public sealed class TrackedMessageSource : IMessageSource
{
    private readonly IMessageSource _inner;
    private readonly ScenarioRun _run;
    private readonly TimeProvider _timers;
    private readonly Random _random;

    /// <summary>Wraps <paramref name="inner"/> for <paramref name="run"/>.</summary>
    /// <param name="inner">The broker queue holding the run's messages.</param>
    /// <param name="run">The run.</param>
    /// <param name="timers">The time provider of the receive delay (the scheduler's, so it fires in the receive lane).</param>
    public TrackedMessageSource(IMessageSource inner, ScenarioRun run, TimeProvider timers)
    {
        ArgumentNullException.ThrowIfNull(inner);
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(timers);
        _inner = inner;
        _run = run;
        _timers = timers;
        _random = ScenarioRandom.ForReceive(run.Settings.Seed);
    }

    /// <inheritdoc />
    public TimeSpan? LockDuration => _inner.LockDuration;

    /// <inheritdoc />
    public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        if (!_run.Queue.HasMessages)
        {
            return null;
        }

        // The seed's receive time is the whole receive call; the broker's own latency (--broker-latency) is part of it, so
        // the pump's receive takes as long as the seed consumer's rather than their sum.
        var settings = _run.Settings;
        var receiveTime = ScenarioRandom.Jitter(settings.ReceiveTime, settings.IoJitter, _random) - settings.BrokerLatency;
        await _run.Clock.Delay(receiveTime > TimeSpan.Zero ? receiveTime : TimeSpan.Zero, _timers, cancellationToken);
        if (!_run.Queue.TryTake(out var simulated))
        {
            return null;
        }

        var leased = await _inner.ReceiveAsync(cancellationToken)
            ?? throw new InvalidOperationException($"The broker queue ran out before message {simulated.Id}; it must hold every message of the run.");
        _run.Tracker.OnReceived(simulated);
        return new ReportingLeasedMessage(leased, simulated, ReportToTracker);
    }

    private void ReportToTracker(ReportingLeasedMessage message, LeaseEvent leaseEvent)
    {
        switch (leaseEvent)
        {
            case LeaseEvent.Renewed:
            case LeaseEvent.RenewalLost:
                _run.Tracker.RecordBrokerRenewal(message.Simulated, renewed: leaseEvent == LeaseEvent.Renewed);
                break;
            default:
                _run.Tracker.RecordBrokerOutcome(message.Simulated, leaseEvent == LeaseEvent.Completed ? MessageStatus.Done : MessageStatus.Lost);
                break;
        }
    }
}
