using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

internal sealed partial class AmqpHost
{
    private void AttachRequests(ReceivingAmqpLink link, string address, Func<AmqpMessage, Task<RequestAnswer>> handler)
    {
        link.RegisterMessageListener(message => _ = AnswerAsync(link, address, message, handler));
        link.SetTotalLinkCredit(100, true, true);
    }

    private async Task AnswerAsync(ReceivingAmqpLink link, string address, AmqpMessage request, Func<AmqpMessage, Task<RequestAnswer>> handler)
    {
        try
        {
            var replyTo = request.Properties?.ReplyTo?.ToString();
            var messageId = request.Properties?.MessageId;
            link.DisposeMessage(request, AmqpConstants.AcceptedOutcome, true, false);
            var (response, afterSent) = await handler(request).ConfigureAwait(false);
            try
            {
                response.Properties.CorrelationId = messageId;
                response.Settled = true;
                if (replyTo is not null && _replyLinks.TryGetValue(ReplyKey(address, replyTo), out var replyLink))
                {
                    replyLink.SendMessageNoWait(response, AmqpConstants.EmptyBinary, AmqpConstants.NullBinary);
                }
            }
            finally
            {
                afterSent?.Invoke();
            }
        }
        catch (Exception exception) when (exception is AmqpException or InvalidOperationException or ObjectDisposedException)
        {
            // The requester went away; it retries on a new link.
        }
        finally
        {
            request.Dispose();
        }
    }

    private static string ReplyKey(string address, string replyTo) => address + "\n" + replyTo;
}
