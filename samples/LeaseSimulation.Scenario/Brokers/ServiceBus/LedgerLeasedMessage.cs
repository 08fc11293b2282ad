using LeaseSimulation.Messages;
using PriorityAsync.MessagePump;

namespace LeaseSimulation.Brokers.ServiceBus;

/// <summary>A Service Bus message as the pump sees it, reporting its renewals and how its delivery ended to the run's ledger.</summary>
public sealed class LedgerLeasedMessage : ILeasedMessage
{
    private readonly ILeasedMessage _inner;
    private readonly ServiceBusLedger _ledger;
    private int _settling;

    /// <summary>Wraps <paramref name="inner"/>.</summary>
    /// <param name="inner">The transport's message.</param>
    /// <param name="simulated">The scenario's record of the message.</param>
    /// <param name="ledger">The run's ledger.</param>
    public LedgerLeasedMessage(ILeasedMessage inner, SimulatedMessage simulated, ServiceBusLedger ledger)
    {
        ArgumentNullException.ThrowIfNull(inner);
        ArgumentNullException.ThrowIfNull(simulated);
        ArgumentNullException.ThrowIfNull(ledger);
        _inner = inner;
        Simulated = simulated;
        _ledger = ledger;
    }

    /// <summary>Gets the scenario's record of the message.</summary>
    public SimulatedMessage Simulated { get; }

    /// <inheritdoc />
    public string MessageId => _inner.MessageId;

    /// <inheritdoc />
    public ReadOnlyMemory<byte> Body => _inner.Body;

    /// <inheritdoc />
    public IReadOnlyDictionary<string, string> Headers => _inner.Headers;

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
            _ledger.OnRenewed(MessageId);
            return lockedUntil;
        }
        catch (LeaseLostException) when (Volatile.Read(ref _settling) == 0)
        {
            // A renewal that races the settlement finds the message settled: the settlement's outcome counts, not the renewal.
            _ledger.OnSettled(MessageId, DeliveryCount, DeliveryOutcome.LockLost);
            throw;
        }
    }

    /// <inheritdoc />
    public Task CompleteAsync(CancellationToken cancellationToken = default) =>
        SettleAsync(() => _inner.CompleteAsync(cancellationToken), DeliveryOutcome.Completed);

    /// <inheritdoc />
    public Task AbandonAsync(CancellationToken cancellationToken = default) =>
        SettleAsync(() => _inner.AbandonAsync(cancellationToken), DeliveryOutcome.Abandoned);

    /// <inheritdoc />
    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) =>
        SettleAsync(() => _inner.DeadLetterAsync(reason, cancellationToken), DeliveryOutcome.Abandoned);

    private async Task SettleAsync(Func<Task> settle, DeliveryOutcome outcome)
    {
        Volatile.Write(ref _settling, 1);
        try
        {
            await settle();
            _ledger.OnSettled(MessageId, DeliveryCount, outcome);
        }
        catch (LeaseLostException)
        {
            _ledger.OnSettled(MessageId, DeliveryCount, DeliveryOutcome.LockLost);
            throw;
        }
    }
}
