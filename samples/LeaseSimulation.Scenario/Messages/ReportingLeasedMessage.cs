using PriorityAsync.MessagePump;

namespace LeaseSimulation.Messages;

/// <summary>
/// A broker message as the pump sees it, reporting its renewals and how its delivery ended to the run's bookkeeping
/// (the tracker of the in-memory and PostgreSQL runs, the ledger of the Service Bus runs).
/// </summary>
public sealed class ReportingLeasedMessage : ILeasedMessage
{
    private readonly ILeasedMessage _inner;
    private readonly Action<ReportingLeasedMessage, LeaseEvent> _report;
    private int _settling;

    /// <summary>Wraps <paramref name="inner"/>.</summary>
    /// <param name="inner">The broker's message.</param>
    /// <param name="simulated">The scenario's record of it.</param>
    /// <param name="report">Called with this message and each event, after the broker answered.</param>
    public ReportingLeasedMessage(ILeasedMessage inner, SimulatedMessage simulated, Action<ReportingLeasedMessage, LeaseEvent> report)
    {
        ArgumentNullException.ThrowIfNull(inner);
        ArgumentNullException.ThrowIfNull(simulated);
        ArgumentNullException.ThrowIfNull(report);
        _inner = inner;
        Simulated = simulated;
        _report = report;
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
            _report(this, LeaseEvent.Renewed);
            return lockedUntil;
        }
        catch (LeaseLostException) when (Volatile.Read(ref _settling) == 0)
        {
            // A renewal that races the settlement of the message (a broker with latency) finds it settled: the
            // settlement's outcome counts, not the renewal.
            _report(this, LeaseEvent.RenewalLost);
            throw;
        }
    }

    /// <inheritdoc />
    public Task CompleteAsync(CancellationToken cancellationToken = default) =>
        SettleAsync(() => _inner.CompleteAsync(cancellationToken), LeaseEvent.Completed);

    /// <inheritdoc />
    public Task AbandonAsync(CancellationToken cancellationToken = default) =>
        SettleAsync(() => _inner.AbandonAsync(cancellationToken), LeaseEvent.Abandoned);

    /// <inheritdoc />
    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) =>
        SettleAsync(() => _inner.DeadLetterAsync(reason, cancellationToken), LeaseEvent.DeadLettered);

    private async Task SettleAsync(Func<Task> settle, LeaseEvent outcome)
    {
        Volatile.Write(ref _settling, 1);
        try
        {
            await settle();
            _report(this, outcome);
        }
        catch (LeaseLostException)
        {
            _report(this, LeaseEvent.SettlementLost);
            throw;
        }
    }
}
