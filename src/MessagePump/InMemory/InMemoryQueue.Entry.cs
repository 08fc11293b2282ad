namespace PriorityAsync.MessagePump;

public sealed partial class InMemoryQueue
{
    /// <summary>One message of the queue. Guarded by the queue's lock.</summary>
    internal sealed class Entry(string messageId, ReadOnlyMemory<byte> body, IReadOnlyDictionary<string, string> headers)
    {
        public string MessageId { get; } = messageId;

        public IReadOnlyDictionary<string, string> Headers { get; } = headers;

        public ReadOnlyMemory<byte> Body { get; } = body;

        public int DeliveryCount { get; set; }

        /// <summary>Gets or sets the token of the current lock, or <see cref="Guid.Empty"/> when not locked.</summary>
        public Guid LockToken { get; set; }

        public DateTimeOffset LockedUntil { get; set; }
    }
}
