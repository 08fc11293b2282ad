namespace PriorityAsync.MessagePump.PostgreSql;

/// <summary>A message to send with <see cref="PostgreSqlQueue.SendBatchAsync"/>.</summary>
/// <param name="Body">The message's body.</param>
/// <param name="MessageId">The message's identifier; <see langword="null"/> for a generated one (a GUID).</param>
public sealed record PostgreSqlMessage(ReadOnlyMemory<byte> Body, string? MessageId = null)
{
    /// <summary>
    /// Gets the message's headers (<see cref="ILeasedMessage.Headers"/>), stored as a JSON object in the <c>headers</c>
    /// column; <see langword="null"/> (the default) or empty for none. Values must not be null.
    /// </summary>
    public IReadOnlyDictionary<string, string>? Headers { get; init; }
}
