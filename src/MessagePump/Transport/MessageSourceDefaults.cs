namespace PriorityAsync.MessagePump;

/// <summary>The default batch operations of <see cref="IMessageSource"/>, built on its single-message calls.</summary>
internal static class MessageSourceDefaults
{
    /// <summary>The dead-letter reason given to an <see cref="ILeasedMessage"/>, which requires one, for a settlement without.</summary>
    private const string NoReason = "DeadLettered";

    /// <summary>Receives one message and returns it as a batch of zero or one.</summary>
    public static async Task<IReadOnlyList<ILeasedMessage>> ReceiveOneAsync(IMessageSource source, CancellationToken cancellationToken)
    {
        var message = await source.ReceiveAsync(cancellationToken);
        return message is null ? [] : [message];
    }

    /// <summary>
    /// The transport's own settle call of any message, which does not come back through a pump that owns it: an
    /// <see cref="ISettleableMessage"/>'s <see cref="ISettleableMessage.SettleAsync"/>; otherwise the
    /// <see cref="ILeasedMessage"/> calls, confirmed when they return (<see cref="SettlementKind.Defer"/> and transport
    /// data are refused, since such a message has no way to carry them).
    /// </summary>
    public static Task<SettlementOutcome> SettleAsync(ILeasedMessage message, MessageSettlement settlement, CancellationToken cancellationToken) =>
        message is ISettleableMessage settleable
            ? settleable.SettleAsync(settlement, cancellationToken)
            : SettleThroughLeasedMessageAsync(message, settlement, cancellationToken);

    private static async Task<SettlementOutcome> SettleThroughLeasedMessageAsync(ILeasedMessage message, MessageSettlement settlement, CancellationToken cancellationToken)
    {
        if (settlement.TransportData is not null)
        {
            throw new ArgumentException($"{message.GetType().Name} is not an ISettleableMessage: it cannot carry a settlement's transport data.", nameof(settlement));
        }

        await (settlement.Kind switch
        {
            SettlementKind.Complete => message.CompleteAsync(cancellationToken),
            SettlementKind.Abandon => message.AbandonAsync(cancellationToken),
            SettlementKind.Defer => throw new NotSupportedException($"{message.GetType().Name} cannot be deferred: only an ISettleableMessage of a transport with defer can."),
            _ when settlement.Description is null => message.DeadLetterAsync(settlement.Reason ?? NoReason, cancellationToken),
            _ => message.DeadLetterAsync(settlement.Reason ?? NoReason, settlement.Description, cancellationToken),
        });
        return SettlementOutcome.Confirmed;
    }

    /// <summary>
    /// Issues every message's <see cref="ILeasedMessage.CompleteAsync"/> at once, then collects each outcome in order
    /// (awaiting each task in turn rather than through <c>Task.WhenAll</c>, which would complete on the thread pool).
    /// </summary>
    public static async Task<IReadOnlyList<Exception?>> CompleteEachAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken)
    {
        var calls = new Task[messages.Count];
        for (var i = 0; i < calls.Length; i++)
        {
            calls[i] = StartCompleteAsync(messages[i], cancellationToken);
        }

        var outcomes = new Exception?[calls.Length];
        for (var i = 0; i < calls.Length; i++)
        {
            await calls[i].ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
            outcomes[i] = calls[i].IsCompletedSuccessfully ? null : Unwrap(calls[i], "complete");
        }

        return outcomes;
    }

    private static Task StartCompleteAsync(ILeasedMessage message, CancellationToken cancellationToken)
    {
        try
        {
            // A pump-owned message's public CompleteAsync goes through the pump's settlement, which is what called here.
            return message is ISettleableMessage settleable
                ? settleable.SettleAsync(MessageSettlement.Complete, cancellationToken)
                : message.CompleteAsync(cancellationToken);
        }
        catch (Exception ex)
        {
            return Task.FromException(ex);
        }
    }

    private static Exception Unwrap(Task failed, string operation) =>
        failed.Exception?.InnerException ?? new OperationCanceledException($"The {operation} call was canceled.");

    /// <summary>
    /// Issues every message's <see cref="ILeasedMessage.RenewLockAsync"/> at once, then collects each outcome in order
    /// (awaiting each task in turn, as <see cref="CompleteEachAsync"/> does).
    /// </summary>
    public static async Task<IReadOnlyList<LeaseRenewal>> RenewEachAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken)
    {
        var calls = new Task<DateTimeOffset>[messages.Count];
        for (var i = 0; i < calls.Length; i++)
        {
            calls[i] = StartRenewAsync(messages[i], cancellationToken);
        }

        var outcomes = new LeaseRenewal[calls.Length];
        for (var i = 0; i < calls.Length; i++)
        {
            await ((Task)calls[i]).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
            outcomes[i] = calls[i].IsCompletedSuccessfully ? LeaseRenewal.Renewed(await calls[i]) : LeaseRenewal.Failed(Unwrap(calls[i], "renew"));
        }

        return outcomes;
    }

    private static Task<DateTimeOffset> StartRenewAsync(ILeasedMessage message, CancellationToken cancellationToken)
    {
        try
        {
            return message.RenewLockAsync(cancellationToken);
        }
        catch (Exception ex)
        {
            return Task.FromException<DateTimeOffset>(ex);
        }
    }
}
