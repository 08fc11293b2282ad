using LeaseSimulation.Messages;
using LeaseSimulation.Tracking;
using PriorityAsync.MessagePump;

namespace LeaseSimulation.Consumers.Pump;

/// <summary>A broker message that reports its renewals and settlement to the run's tracker.</summary>
public sealed class TrackedLeasedMessage : ILeasedMessage
{
    private readonly ILeasedMessage _inner;
    private readonly ScenarioTracker _tracker;
    private int _settling;

    /// <summary>Wraps <paramref name="inner"/>.</summary>
    /// <param name="inner">The broker's message.</param>
    /// <param name="simulated">The scenario's record of it.</param>
    /// <param name="tracker">The run's tracker.</param>
    public TrackedLeasedMessage(ILeasedMessage inner, SimulatedMessage simulated, ScenarioTracker tracker)
    {
        ArgumentNullException.ThrowIfNull(inner);
        ArgumentNullException.ThrowIfNull(simulated);
        ArgumentNullException.ThrowIfNull(tracker);
        _inner = inner;
        Simulated = simulated;
        _tracker = tracker;
    }

    /// <summary>Gets the scenario's record of the message.</summary>
    public SimulatedMessage Simulated { get; }

    /// <inheritdoc />
    public string MessageId => _inner.MessageId;

    /// <inheritdoc />
    public ReadOnlyMemory<byte> Body => _inner.Body;

    /// <inheritdoc />
    public int DeliveryCount => _inner.DeliveryCount;

    /// <inheritdoc />
    public DateTimeOffset LockedUntil => _inner.LockedUntil;

    /// <inheritdoc />
    public async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            var lockedUntil = await _inner.RenewLockAsync(cancellationToken);
            _tracker.RecordBrokerRenewal(Simulated, renewed: true);
            return lockedUntil;
        }
        catch (LeaseLostException) when (Volatile.Read(ref _settling) == 0)
        {
            // A renewal that races the settlement of the message (a broker with latency) finds it settled: the
            // settlement's outcome counts, not the renewal.
            _tracker.RecordBrokerRenewal(Simulated, renewed: false);
            throw;
        }
    }

    /// <inheritdoc />
    public Task CompleteAsync(CancellationToken cancellationToken = default) =>
        SettleAsync(() => _inner.CompleteAsync(cancellationToken), MessageStatus.Done);

    /// <inheritdoc />
    public Task AbandonAsync(CancellationToken cancellationToken = default) =>
        SettleAsync(() => _inner.AbandonAsync(cancellationToken), MessageStatus.Lost);

    /// <inheritdoc />
    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) =>
        SettleAsync(() => _inner.DeadLetterAsync(reason, cancellationToken), MessageStatus.Lost);

    private async Task SettleAsync(Func<Task> settle, MessageStatus outcome)
    {
        Volatile.Write(ref _settling, 1);
        try
        {
            await settle();
            _tracker.RecordBrokerOutcome(Simulated, outcome);
        }
        catch (LeaseLostException)
        {
            _tracker.RecordBrokerOutcome(Simulated, MessageStatus.Lost);
            throw;
        }
    }
}
