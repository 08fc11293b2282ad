namespace PriorityAsync.MessagePump;

/// <summary>The default batch operations of <see cref="IMessageSource"/>, built on its single-message calls.</summary>
internal static class MessageSourceDefaults
{
    /// <summary>Receives one message and returns it as a batch of zero or one.</summary>
    public static async Task<IReadOnlyList<ILeasedMessage>> ReceiveOneAsync(IMessageSource source, CancellationToken cancellationToken)
    {
        var message = await source.ReceiveAsync(cancellationToken);
        return message is null ? [] : [message];
    }

    /// <summary>Throws when a batch to settle is null, empty or holds a null message.</summary>
    public static void ThrowIfInvalidBatch(IReadOnlyList<ILeasedMessage> messages, string operation = "settle", string paramName = "messages")
    {
        ArgumentNullException.ThrowIfNull(messages, paramName);
        if (messages.Count == 0)
        {
            throw new ArgumentException($"A batch to {operation} must hold at least one message.", paramName);
        }

        for (var i = 0; i < messages.Count; i++)
        {
            if (messages[i] is null)
            {
                throw new ArgumentNullException(paramName, $"The message at index {i} of the batch is null.");
            }
        }
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
            return message is IPumpRoutedMessage routed
                ? routed.SettleDirectAsync(Settlement.Complete, reason: null, description: null, cancellationToken)
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
