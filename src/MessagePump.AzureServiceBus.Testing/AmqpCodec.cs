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
        return ToBytes(copy);
    }

    /// <summary>Reads the message id (a new one when the sender set none) and the session id (group id).</summary>
    public static (string MessageId, string? SessionId) Inspect(byte[] encoded)
    {
        using var message = Decode(encoded);
        var properties = message.Properties;
        var messageId = properties?.MessageId?.ToString() ?? Guid.NewGuid().ToString("N");
        return (messageId, properties?.GroupId);
    }

    public static byte[] WithDeadLetterProperties(byte[] encoded, string? reason, string? description)
    {
        using var message = Decode(encoded);
        message.ApplicationProperties ??= new ApplicationProperties();
        if (reason is not null)
        {
            message.ApplicationProperties.Map[DeadLetterReasonProperty] = reason;
        }

        if (description is not null)
        {
            message.ApplicationProperties.Map[DeadLetterDescriptionProperty] = description;
        }

        return ToBytes(message);
    }

    /// <summary>The transfer for one delivery: the stored message with the header's delivery count and the broker's annotations.</summary>
    public static AmqpMessage BuildDelivery(PendingDelivery delivery)
    {
        var message = Decode(delivery.Message.Encoded);
        message.Header.DeliveryCount = (uint)delivery.HeaderDeliveryCount;
        var annotations = message.MessageAnnotations.Map;
        annotations[EnqueuedTime] = delivery.Message.EnqueuedTime.UtcDateTime;
        annotations[SequenceNumber] = delivery.Message.SequenceNumber;
        if (delivery.Message.DeadLetterSource is { } deadLetterSource)
        {
            annotations[DeadLetterSource] = deadLetterSource;
        }

        if (!delivery.Consumer.ReceiveAndDelete)
        {
            annotations[LockedUntil] = delivery.LockedUntil.UtcDateTime;
            annotations[LockToken] = delivery.LockToken;
        }

        return message;
    }

    /// <summary>A message over stored bytes whose header, annotations and properties can be changed before it is encoded again.</summary>
    public static AmqpMessage Decode(byte[] encoded) =>
        AmqpMessage.CreateAmqpStreamMessage(new BufferListStream([new ArraySegment<byte>(encoded)]));
}
