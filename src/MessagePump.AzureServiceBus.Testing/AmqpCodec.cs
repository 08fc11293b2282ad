using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Encoding;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>Encodes and decodes the stored form of messages and builds the transfers the receivers get.</summary>
internal static class AmqpCodec
{
    /// <summary>The message format of a batch: one AMQP message whose data sections each hold an encoded message.</summary>
    public const uint BatchFormat = 0x80013700;

    public static readonly AmqpSymbol EnqueuedTime = "x-opt-enqueued-time";
    public static readonly AmqpSymbol SequenceNumber = "x-opt-sequence-number";
    public static readonly AmqpSymbol LockedUntil = "x-opt-locked-until";
    public static readonly AmqpSymbol LockToken = "x-opt-lock-token";
    public static readonly AmqpSymbol DeadLetterSource = "x-opt-deadletter-source";
    public static readonly AmqpSymbol ScheduledEnqueueTime = "x-opt-scheduled-enqueue-time";
    public static readonly AmqpSymbol EnqueueSequenceNumber = "x-opt-enqueue-sequence-number";
    public static readonly AmqpSymbol MessageState = "x-opt-message-state";
    public const string DeadLetterReasonProperty = "DeadLetterReason";
    public const string DeadLetterDescriptionProperty = "DeadLetterErrorDescription";

    public static byte[] Encode(ReadOnlyMemory<byte> body, string messageId, string? sessionId, IReadOnlyDictionary<string, object>? applicationProperties)
    {
        using var message = AmqpMessage.Create(new Data { Value = new ArraySegment<byte>(body.ToArray()) });
        message.Properties.MessageId = messageId;
        if (sessionId is not null)
        {
            message.Properties.GroupId = sessionId;
        }

        if (applicationProperties is not null)
        {
            foreach (var (key, value) in applicationProperties)
            {
                message.ApplicationProperties.Map[key] = value;
            }
        }

        return ToBytes(message);
    }

    /// <summary>The bytes of a message built or changed here (all its sections encoded).</summary>
    public static byte[] ToBytes(AmqpMessage message)
    {
        var segments = message.GetPayload(int.MaxValue, out _);
        var bytes = new byte[segments.Sum(s => s.Count)];
        var offset = 0;
        foreach (var segment in segments)
        {
            segment.AsSpan().CopyTo(bytes.AsSpan(offset));
            offset += segment.Count;
        }

        return bytes;
    }

    /// <summary>The bytes of a message received on a link, as the sender encoded it.</summary>
    public static byte[] ReceivedToBytes(AmqpMessage message)
    {
        using var copy = message.Clone();
        var bytes = ToBytes(copy);
        if (!message.BodyType.HasFlag(SectionFlag.Data) || message.DataBody is not { } sections || sections.Count() < 2)
        {
            return bytes;
        }

        // A copy keeps only the last of several data sections: take the body from the sections themselves.
        using var body = AmqpMessage.Create(sections.Select(d => new Data { Value = d.Value }).ToList());
        return AmqpSections.Splice(bytes, ToBytes(body)) ?? bytes;
    }

    /// <summary>Reads the message id (a new one when the sender set none), the session id (group id) and the scheduled enqueue time.</summary>
    public static MessageFacts Inspect(byte[] encoded)
    {
        using var message = Decode(encoded);
        var properties = message.Properties;
        var messageId = properties?.MessageId?.ToString() ?? Guid.NewGuid().ToString("N");
        DateTimeOffset? scheduled = message.MessageAnnotations?.Map[ScheduledEnqueueTime] is DateTime at
            ? new DateTimeOffset(DateTime.SpecifyKind(at, DateTimeKind.Utc))
            : null;
        return new MessageFacts(messageId, properties?.GroupId, scheduled);
    }

    /// <summary>
    /// The encoded form a peek returns: the stored message with its sequence numbers, enqueued time, state (scheduled
    /// while its enqueue time has not come on <paramref name="now"/>) and lock (when locked).
    /// </summary>
    public static byte[] BuildPeeked(StoredMessage stored, DateTimeOffset now) => Changed(stored.Encoded, message =>
    {
        message.Header.DeliveryCount = (uint)stored.DeliveryCount;
        var annotations = message.MessageAnnotations.Map;
        annotations[EnqueuedTime] = stored.EnqueuedTime.UtcDateTime;
        annotations[SequenceNumber] = stored.SequenceNumber;
        annotations[EnqueueSequenceNumber] = stored.SequenceNumber;
        annotations[MessageState] = StateOf(stored, now);
        if (stored.Holder is not null)
        {
            annotations[LockedUntil] = stored.LockedUntil.UtcDateTime;
        }

        if (stored.DeadLetterSource is { } deadLetterSource)
        {
            annotations[DeadLetterSource] = deadLetterSource;
        }
    });

    public static byte[] WithDeadLetterProperties(byte[] encoded, string? reason, string? description) => Changed(encoded, message =>
    {
        message.ApplicationProperties ??= new ApplicationProperties();
        if (reason is not null)
        {
            message.ApplicationProperties.Map[DeadLetterReasonProperty] = reason;
        }

        if (description is not null)
        {
            message.ApplicationProperties.Map[DeadLetterDescriptionProperty] = description;
        }
    });

    /// <summary>The message with application properties set or replaced (a settlement's properties to modify).</summary>
    public static byte[] WithApplicationProperties(byte[] encoded, IReadOnlyList<KeyValuePair<string, object>> properties) => Changed(encoded, message =>
    {
        message.ApplicationProperties ??= new ApplicationProperties();
        foreach (var (key, value) in properties)
        {
            message.ApplicationProperties.Map[key] = value;
        }
    });

    /// <summary>The transfer for one delivery: the stored message with the header's delivery count and the broker's annotations.</summary>
    public static AmqpMessage BuildDelivery(PendingDelivery delivery) =>
        AmqpMessage.CreateAmqpStreamMessage(new BufferListStream([new ArraySegment<byte>(Changed(delivery.Message.Encoded, message => AnnotateDelivery(message, delivery)))]), true);

    private static void AnnotateDelivery(AmqpMessage message, PendingDelivery delivery)
    {
        message.Header.DeliveryCount = (uint)delivery.HeaderDeliveryCount;
        var annotations = message.MessageAnnotations.Map;
        annotations[EnqueuedTime] = delivery.Message.EnqueuedTime.UtcDateTime;
        annotations[SequenceNumber] = delivery.Message.SequenceNumber;
        annotations[EnqueueSequenceNumber] = delivery.Message.SequenceNumber;
        annotations[MessageState] = delivery.Message.Deferred ? 1 : 0; // delivered only once its scheduled time has come
        if (delivery.Message.DeadLetterSource is { } deadLetterSource)
        {
            annotations[DeadLetterSource] = deadLetterSource;
        }

        if (!delivery.Consumer.ReceiveAndDelete)
        {
            annotations[LockedUntil] = delivery.LockedUntil.UtcDateTime;
            annotations[LockToken] = delivery.LockToken;
        }
    }

    /// <summary>
    /// The stored message with its header, annotations or properties changed: those sections re-encoded, the body and
    /// footer kept byte for byte (a decoded message keeps only the last of several data sections).
    /// </summary>
    private static byte[] Changed(byte[] encoded, Action<AmqpMessage> change)
    {
        using var message = Decode(encoded);
        change(message);
        var head = ToBytes(message);
        return AmqpSections.Splice(head, encoded) ?? head;
    }

    /// <summary>The message state as Service Bus sends it (<c>x-opt-message-state</c>, an int): 0 active, 1 deferred, 2 scheduled.</summary>
    private static int StateOf(StoredMessage message, DateTimeOffset now) => message.Deferred ? 1 : message.VisibleAt > now ? 2 : 0;

    /// <summary>A message over stored bytes whose header, annotations and properties can be changed before it is encoded again.</summary>
    public static AmqpMessage Decode(byte[] encoded) =>
        AmqpMessage.CreateAmqpStreamMessage(new BufferListStream([new ArraySegment<byte>(encoded)]));
}
