using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>A client's send link to a queue or a topic: each transfer (or each message of a batch) is enqueued, then accepted.</summary>
internal static class PublisherLink
{
    public static void Attach(ServiceBusTestBroker broker, ReceivingAmqpLink link, ServiceBusTestQueue? queue, ServiceBusTestTopic? topic)
    {
        link.RegisterMessageListener(message => OnMessage(broker, link, queue, topic, message));
        link.SetTotalLinkCredit(1000, true, true);
    }

    /// <summary>The encoded messages a transfer carries: itself, or each data section of a batch (format 0x80013700).</summary>
    private static List<byte[]> Split(AmqpMessage message)
    {
        if (message.MessageFormat != AmqpCodec.BatchFormat)
        {
            return [AmqpCodec.ReceivedToBytes(message)];
        }

        var encoded = new List<byte[]>();
        foreach (var data in message.DataBody)
        {
            encoded.Add(data.Value switch
            {
                ArraySegment<byte> segment => segment.AsSpan().ToArray(),
                byte[] bytes => bytes,
                _ => throw new InvalidDataException("A batch data section does not hold binary data."),
            });
        }

        return encoded;
    }

    private static void OnMessage(ServiceBusTestBroker broker, ReceivingAmqpLink link, ServiceBusTestQueue? queue, ServiceBusTestTopic? topic, AmqpMessage message)
    {
        try
        {
            if (broker.Faults.Take(ServiceBusTestOperations.Send) is { } fault)
            {
                // As the service answers a send it failed: the outcome carries the error, nothing is enqueued.
                link.DisposeMessage(message, FaultErrors.RejectedOutcome(fault, session: false), true, false);
                return;
            }

            var messages = Split(message).Select(bytes => (Bytes: bytes, Facts: AmqpCodec.Inspect(bytes))).ToList();
            var error = broker.Operate(now => Enqueue(queue, topic, messages, now));
            var outcome = error is null
                ? (Outcome)AmqpConstants.AcceptedOutcome
                : new Rejected { Error = new Error { Condition = ServiceBusSymbols.NotAllowed, Description = error } };
            link.DisposeMessage(message, outcome, true, false);
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            link.DisposeMessage(message, new Rejected { Error = new Error { Condition = "amqp:decode-error", Description = exception.Message } }, true, false);
        }
        finally
        {
            message.Dispose();
        }
    }

    /// <summary>Enqueues all the messages, or none of them (returning why) when a session entity gets one without a session id.</summary>
    private static string? Enqueue(ServiceBusTestQueue? queue, ServiceBusTestTopic? topic, List<(byte[] Bytes, MessageFacts Facts)> messages, DateTimeOffset now)
    {
        foreach (var (_, (messageId, sessionId, _)) in messages)
        {
            var error = sessionId is not null ? null
                : queue is not null ? (queue.RequiresSession ? $"The messaging entity '{queue.Path}' requires sessions: the message '{messageId}' has no session id." : null)
                : topic!.SessionErrorLocked();
            if (error is not null)
            {
                return error;
            }
        }

        foreach (var (bytes, (messageId, sessionId, scheduled)) in messages)
        {
            if (queue is not null)
            {
                queue.EnqueueLocked(bytes, messageId, sessionId, now, deadLetterSource: null, deliveryCount: 0, scheduled);
            }
            else
            {
                topic!.PublishLocked(bytes, messageId, sessionId, now, scheduled);
            }
        }

        return null;
    }
}
