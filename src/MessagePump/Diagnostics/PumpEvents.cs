using System.Diagnostics;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.MessagePump;

/// <summary>
/// The one place a pump reports what happens to it: each method is one event and feeds every sink it concerns — the
/// statistics counters (<see cref="MessagePumpStatistics"/>), the metrics and spans (<see cref="PumpTelemetry"/>) and the
/// log (<see cref="MessagePumpLog"/>, whose event ids are stable). The pump makes one call per event, so no sink can be
/// forgotten at a call site.
/// </summary>
internal sealed class PumpEvents
{
    private readonly string _pump;
    private readonly ILogger _logger;
    private readonly PumpTelemetry _telemetry;
    private long _received;
    private long _completed;
    private long _abandoned;
    private long _abandonedAtStop;
    private long _unsettledAtStop;
    private long _deadLettered;
    private long _deferred;
    private long _unconfirmed;
    private long _leasesLost;
    private long _settleFailures;
    private long _handlerFailures;
    private long _renewals;
    private long _transientRetries;
    private long _expiredAtHandOff;
    private long _minHandOffHeadroomTicks = long.MaxValue;
    private long _receiveFailures;
    private long _receiveFailingSinceTicks; // UTC ticks of the first of the failed receives since the last answered one; 0 while receives are answered

    public PumpEvents(string pump, IMessageSource? source, IMeterFactory? meterFactory, ILogger logger)
    {
        _pump = pump;
        _logger = logger;
        _telemetry = new PumpTelemetry(pump, source, PumpInstruments.For(meterFactory));
    }

    public void Started(string scheduler, int maxInFlight) => MessagePumpLog.Started(_logger, _pump, scheduler, maxInFlight);

    public void Stopping(int inFlight, TimeSpan timeout) => MessagePumpLog.Stopping(_logger, _pump, inFlight, timeout);

    public void Stopped() => MessagePumpLog.Stopped(
        _logger, _pump, Interlocked.Read(ref _received), Interlocked.Read(ref _completed), Interlocked.Read(ref _abandoned), Interlocked.Read(ref _deadLettered), Interlocked.Read(ref _leasesLost));

    /// <summary>A receive call is about to be sent: the start of its span, when a listener may want one.</summary>
    public static DateTimeOffset? ReceiveSending() => PumpTelemetry.ReceiveSent();

    /// <summary>A receive call answered (the receive span; the messages are reported one by one by <see cref="Received"/>).</summary>
    public void ReceiveAnswered(DateTimeOffset? sent, IReadOnlyList<ILeasedMessage> messages) => _telemetry.Received(sent, messages);

    /// <summary>A receive call failed at <paramref name="now"/>: counted, logged, and the start of a run of failures remembered.</summary>
    public void ReceiveFailed(Exception exception, TimeSpan retryDelay, DateTimeOffset now)
    {
        Interlocked.Increment(ref _receiveFailures);
        Interlocked.CompareExchange(ref _receiveFailingSinceTicks, now.UtcTicks, 0);
        MessagePumpLog.ReceiveFailed(_logger, exception, _pump, retryDelay);
    }

    /// <summary>A receive call was answered (with messages or none): a run of failures, if any, has ended.</summary>
    public void ReceiveSucceeded()
    {
        if (Volatile.Read(ref _receiveFailingSinceTicks) != 0)
        {
            Volatile.Write(ref _receiveFailingSinceTicks, 0);
        }
    }

    public void TransportContractBroken(Exception exception) => MessagePumpLog.TransportContractBroken(_logger, exception, _pump);

    public void BatchRenewalBroken(Exception exception) => MessagePumpLog.BatchRenewalBroken(_logger, exception, _pump);

    public void Received(ILeasedMessage message)
    {
        Interlocked.Increment(ref _received);
        _telemetry.Received();
        MessagePumpLog.Received(_logger, _pump, message.MessageId, message.DeliveryCount, message.LockedUntil);
    }

    /// <summary>The handler is about to run: starts its span, current for the caller (see <see cref="PumpTelemetry.StartProcess"/>).</summary>
    public Activity? Processing(ILeasedMessage message) => _telemetry.StartProcess(message);

    /// <summary>The handler returned or threw: its duration and the end of its span.</summary>
    public void Processed(Activity? span, TimeSpan duration, Exception? failure)
    {
        _telemetry.Processed(duration, failure);
        PumpTelemetry.StopProcess(span, failure);
    }

    public void HandlerFailed(ILeasedMessage message, Exception failure)
    {
        Interlocked.Increment(ref _handlerFailures);
        MessagePumpLog.HandlerFailed(_logger, failure, _pump, message.MessageId, message.DeliveryCount);
    }

    public void Settled(ILeasedMessage message, MessageSettlement settlement, SettlementOutcome outcome)
    {
        _telemetry.Settled(settlement.Kind);
        if (outcome == SettlementOutcome.Unconfirmed)
        {
            Interlocked.Increment(ref _unconfirmed);
            MessagePumpLog.SettledUnconfirmed(_logger, _pump, settlement.ToString(), message.MessageId);
        }

        switch (settlement.Kind)
        {
            case SettlementKind.Complete:
                Interlocked.Increment(ref _completed);
                MessagePumpLog.Completed(_logger, _pump, message.MessageId);
                break;
            case SettlementKind.Abandon:
                Interlocked.Increment(ref _abandoned);
                MessagePumpLog.Abandoned(_logger, _pump, message.MessageId);
                break;
            case SettlementKind.Defer:
                Interlocked.Increment(ref _deferred);
                MessagePumpLog.Deferred(_logger, _pump, message.MessageId);
                break;
            default:
                Interlocked.Increment(ref _deadLettered);
                MessagePumpLog.DeadLettered(_logger, _pump, message.MessageId, settlement.Reason ?? "no reason given");
                break;
        }
    }

    public void SettleFailed(Exception exception, string operation, string messageId)
    {
        Interlocked.Increment(ref _settleFailures);
        MessagePumpLog.SettleFailed(_logger, exception, _pump, operation, messageId);
    }

    /// <summary>A message left the pump's books (it no longer counts as in flight).</summary>
    public void Finished() => _telemetry.Finished();

    /// <summary>A lease was renewed; <paramref name="slack"/> is the lock time it had left when the call was sent.</summary>
    public void Renewed(string messageId, TimeSpan slack, TimeSpan roundTrip)
    {
        Interlocked.Increment(ref _renewals);
        _telemetry.Renewed(slack, roundTrip);
        MessagePumpLog.Renewed(_logger, _pump, messageId, slack);
    }

    /// <summary>The keeper sent <paramref name="count"/> renewals again while their earlier renewals were unanswered.</summary>
    public void RenewalsHedged(int count) => MessagePumpLog.RenewalsHedged(_logger, _pump, count);

    /// <summary>Renewals take more than a third of the lock (<paramref name="roundTrip"/> against <paramref name="lockTime"/>).</summary>
    public void RoundTripsTooSlowForLock(TimeSpan roundTrip, TimeSpan lockTime) =>
        MessagePumpLog.RoundTripsTooSlowForLock(_logger, _pump, roundTrip, lockTime);

    /// <summary>A renew or settle call failed transiently and is retried after <paramref name="delay"/>.</summary>
    public void TransientFailure(Exception failure, string operation, string messageIds, TimeSpan delay)
    {
        Interlocked.Increment(ref _transientRetries);
        MessagePumpLog.TransientFailure(_logger, failure, _pump, operation, messageIds, delay);
    }

    /// <summary>A message reached its handler with <paramref name="headroom"/> of its lock left.</summary>
    public void HandedOff(TimeSpan headroom)
    {
        long least;
        do
        {
            least = Interlocked.Read(ref _minHandOffHeadroomTicks);
        }
        while (headroom.Ticks < least && Interlocked.CompareExchange(ref _minHandOffHeadroomTicks, headroom.Ticks, least) != least);

        _telemetry.HandedOff(headroom);
    }

    /// <summary>A message lost its lease before it reached its handler, which is not called (the lost lease is reported by <see cref="LeaseLost"/>).</summary>
    public void ExpiredAtHandOff() => Interlocked.Increment(ref _expiredAtHandOff);

    public void LeaseLost(Exception? exception, string messageId, string operation)
    {
        Interlocked.Increment(ref _leasesLost);
        _telemetry.LeaseLost();
        MessagePumpLog.LeaseLost(_logger, exception, _pump, messageId, operation);
    }

    public void AbandoningAtStop(string messageId) => MessagePumpLog.AbandoningAtStop(_logger, _pump, messageId);

    /// <summary>The stop path's abandon of a message succeeded (its <see cref="Settled"/> was reported already).</summary>
    public void AbandonedAtStop() => Interlocked.Increment(ref _abandonedAtStop);

    public void UnsettledAtStop(string messageId, DateTimeOffset lockedUntil)
    {
        Interlocked.Increment(ref _unsettledAtStop);
        MessagePumpLog.UnsettledAtStop(_logger, _pump, messageId, lockedUntil);
    }

    /// <summary>The counters, with the in-flight figures the pump keeps under its own lock.</summary>
    public MessagePumpStatistics Statistics(int inFlight, int peakInFlight) => new()
    {
        Received = Interlocked.Read(ref _received),
        Completed = Interlocked.Read(ref _completed),
        Abandoned = Interlocked.Read(ref _abandoned),
        AbandonedAtStop = Interlocked.Read(ref _abandonedAtStop),
        UnsettledAtStop = Interlocked.Read(ref _unsettledAtStop),
        DeadLettered = Interlocked.Read(ref _deadLettered),
        Deferred = Interlocked.Read(ref _deferred),
        UnconfirmedSettlements = Interlocked.Read(ref _unconfirmed),
        LeasesLost = Interlocked.Read(ref _leasesLost),
        SettleFailures = Interlocked.Read(ref _settleFailures),
        HandlerFailures = Interlocked.Read(ref _handlerFailures),
        Renewals = Interlocked.Read(ref _renewals),
        TransientRetries = Interlocked.Read(ref _transientRetries),
        ExpiredAtHandOff = Interlocked.Read(ref _expiredAtHandOff),
        MinHandOffHeadroom = Interlocked.Read(ref _minHandOffHeadroomTicks) is var least && least != long.MaxValue ? TimeSpan.FromTicks(least) : null,
        ReceiveFailures = Interlocked.Read(ref _receiveFailures),
        ReceiveFailingSince = Volatile.Read(ref _receiveFailingSinceTicks) is var since && since != 0 ? new DateTimeOffset(since, TimeSpan.Zero) : null,
        InFlight = inFlight,
        PeakInFlight = peakInFlight,
    };
}
