using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Encoding;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

internal sealed partial class ManagementNode
{
    private AmqpMessage Peek(ServiceBusTestQueue queue, AmqpMap? body)
    {
        var from = Convert.ToInt64(body?[FromSequenceNumber] ?? throw new ArgumentException("from-sequence-number is missing.", nameof(body)), System.Globalization.CultureInfo.InvariantCulture);
        var count = Convert.ToInt32(body[MessageCount] ?? throw new ArgumentException("message-count is missing.", nameof(body)), System.Globalization.CultureInfo.InvariantCulture);
        var sessionId = body[SessionIdKey] as string;
        var peeked = _broker.Operate(now => queue.PeekLocked(from, count, sessionId).Select(m => AmqpCodec.BuildPeeked(m, now)).ToList());
        if (peeked.Count == 0)
        {
            return Answer(204, "No messages to peek.", null);
        }

        var messages = peeked.Select(bytes => new AmqpMap { [Message] = new ArraySegment<byte>(bytes) }).ToList();
        return Answer(200, "OK", new AmqpMap { [Messages] = messages });
    }

    private AmqpMessage Schedule(ServiceBusTestQueue queue, AmqpMap? body)
    {
        if (body?[Messages] is not System.Collections.IEnumerable entries)
        {
            throw new ArgumentException("messages is missing.", nameof(body));
        }

        var messages = new List<(byte[] Bytes, MessageFacts Facts)>();
        foreach (var entry in entries)
        {
            var bytes = (entry as AmqpMap)?[Message] switch
            {
                ArraySegment<byte> segment => segment.AsSpan().ToArray(),
                byte[] array => array,
                _ => throw new ArgumentException("A scheduled message carries no encoded message.", nameof(body)),
            };
            messages.Add((bytes, AmqpCodec.Inspect(bytes)));
        }

        if (queue.RequiresSession && messages.Exists(m => m.Facts.SessionId is null))
        {
            return Answer(400, $"'{queue.Path}' requires sessions: every message needs a session id.", null, ServiceBusSymbols.ArgumentError);
        }

        var sequenceNumbers = _broker.Operate(now => messages
            .Select(m => queue.EnqueueLocked(m.Bytes, m.Facts.MessageId, m.Facts.SessionId, now, deadLetterSource: null, deliveryCount: 0, m.Facts.ScheduledEnqueueTime))
            .ToArray());
        return Answer(200, "OK", new AmqpMap { [SequenceNumbers] = sequenceNumbers });
    }

    private AmqpMessage CancelScheduled(ServiceBusTestQueue queue, AmqpMap? body)
    {
        var sequenceNumbers = body?[SequenceNumbers] as long[] ?? throw new ArgumentException("sequence-numbers is missing.", nameof(body));
        // As Service Bus: a sequence number that names no scheduled message is answered MessageNotFound (and nothing is
        // canceled).
        var missing = _broker.Operate(now =>
        {
            foreach (var sequenceNumber in sequenceNumbers)
            {
                if (!queue.IsScheduledLocked(sequenceNumber, now))
                {
                    return (long?)sequenceNumber;
                }
            }

            foreach (var sequenceNumber in sequenceNumbers)
            {
                queue.CancelScheduledLocked(sequenceNumber, now);
            }

            return null;
        });
        return missing is { } sequence
            ? Answer(404, $"The scheduled message with sequence number {sequence} was not found in '{queue.Path}'.", null, MessageNotFound)
            : Answer(200, "OK", null);
    }

    private AmqpMessage ReceiveBySequenceNumber(ServiceBusTestQueue queue, AmqpMap? body)
    {
        var sequenceNumbers = body?[SequenceNumbers] as long[] ?? throw new ArgumentException("sequence-numbers is missing.", nameof(body));
        var receiveAndDelete = body![ReceiverSettleMode] is uint mode && mode == 0;
        var deliveries = _broker.Operate(now => queue.ReceiveDeferredLocked(sequenceNumbers, receiveAndDelete, now));
        if (deliveries is null)
        {
            return Answer(410, "A requested message was not found among the deferred messages.", null, MessageNotFound);
        }

        var messages = deliveries.Select(delivery =>
        {
            using var message = AmqpCodec.BuildDelivery(delivery);
            var entry = new AmqpMap { [Message] = new ArraySegment<byte>(AmqpCodec.ToBytes(message)) };
            if (!receiveAndDelete)
            {
                entry[LockToken] = delivery.LockToken;
            }

            return entry;
        }).ToList();
        return Answer(200, "OK", new AmqpMap { [Messages] = messages });
    }
}
