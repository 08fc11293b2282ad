using LeaseSimulation.Messages;
using PriorityAsync.MessagePump;

namespace LeaseSimulation.Brokers.ServiceBus;

/// <summary>The Service Bus source as the pump sees it: every delivery it receives is recorded in the run's ledger.</summary>
public sealed class LedgerMessageSource : IMessageSource
{
    private readonly IMessageSource _inner;
    private readonly ServiceBusLedger _ledger;

    /// <summary>Wraps <paramref name="inner"/>.</summary>
    /// <param name="inner">The transport's source on the run's queue.</param>
    /// <param name="ledger">The run's ledger.</param>
    public LedgerMessageSource(IMessageSource inner, ServiceBusLedger ledger)
    {
        ArgumentNullException.ThrowIfNull(inner);
        ArgumentNullException.ThrowIfNull(ledger);
        _inner = inner;
        _ledger = ledger;
    }

    /// <inheritdoc />
    public TimeSpan? LockDuration => _inner.LockDuration;

    /// <inheritdoc />
    public string MessagingSystem => _inner.MessagingSystem;

    /// <inheritdoc />
    public string? DestinationName => _inner.DestinationName;

    /// <inheritdoc />
    public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
        await _inner.ReceiveAsync(cancellationToken) is { } message ? Wrap(message) : null;

    /// <inheritdoc />
    public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        var messages = await _inner.ReceiveBatchAsync(maxMessages, cancellationToken);
        return [.. messages.Select(Wrap)];
    }

    private ReportingLeasedMessage Wrap(ILeasedMessage message) =>
        new(message, _ledger.OnDelivered(message.MessageId, message.DeliveryCount), ReportToLedger);

    private void ReportToLedger(ReportingLeasedMessage message, LeaseEvent leaseEvent)
    {
        if (leaseEvent == LeaseEvent.Renewed)
        {
            _ledger.OnRenewed(message.MessageId);
            return;
        }

        // A lost renewal ends the delivery as a lost lock, as a lost settlement does; a dead letter counts as an abandon.
        var outcome = leaseEvent switch
        {
            LeaseEvent.Completed => DeliveryOutcome.Completed,
            LeaseEvent.Abandoned or LeaseEvent.DeadLettered => DeliveryOutcome.Abandoned,
            _ => DeliveryOutcome.LockLost,
        };
        _ledger.OnSettled(message.MessageId, message.DeliveryCount, outcome);
    }
}
