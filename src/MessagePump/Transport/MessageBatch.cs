namespace PriorityAsync.MessagePump;

/// <summary>
/// The argument rule of every batch call of the transport contract (<see cref="IMessageSource.CompleteBatchAsync"/>,
/// <see cref="IMessageSource.RenewBatchAsync"/>), for a transport that implements them itself: the same exceptions, with
/// the same messages, as the contract's own implementations.
/// </summary>
public static class MessageBatch
{
    /// <summary>
    /// Throws when <paramref name="messages"/> is null, empty or holds a null message: a batch holds at least one
    /// message, none of them null.
    /// </summary>
    /// <param name="messages">The batch.</param>
    /// <param name="operation">The batch's operation as the exception's message names it: <c>settle</c>, <c>renew</c>.</param>
    /// <exception cref="ArgumentNullException">
    /// <paramref name="messages"/> is null, or holds a null message (the exception's message gives its index); the
    /// exception names <c>messages</c>, the batch parameter of the contract's calls.
    /// </exception>
    /// <exception cref="ArgumentException">
    /// <paramref name="messages"/> is empty (the exception names <c>messages</c>), or <paramref name="operation"/> is
    /// null, empty or white space.
    /// </exception>
    public static void ThrowIfInvalid(IReadOnlyList<ILeasedMessage> messages, string operation = "settle")
    {
        const string paramName = "messages";
        ArgumentException.ThrowIfNullOrWhiteSpace(operation);
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
}
