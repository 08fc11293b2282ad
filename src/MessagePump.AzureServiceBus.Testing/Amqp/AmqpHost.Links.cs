using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

internal sealed partial class AmqpHost
{
    private async Task OpenLinkAsync(AmqpLink link)
    {
        if (link.IsReceiver)
        {
            if (link.Settings.Target is Microsoft.Azure.Amqp.Transaction.Coordinator)
            {
                // What a send in a TransactionScope attaches first; the 7.x client reports it as NotSupportedException.
                throw Error(ServiceBusSymbols.NotImplemented, "The test broker does not support transactions.");
            }

            var address = AddressOf(link.Settings.Target) ?? throw Error(ServiceBusSymbols.ArgumentError, "The target address is missing.");
            var receiver = (ReceivingAmqpLink)link;
            if (string.Equals(address, ServiceBusSymbols.CbsAddress, StringComparison.Ordinal))
            {
                AttachRequests(receiver, address, async request => await CbsNode.HandleAsync(request).ConfigureAwait(false));
            }
            else if (address.EndsWith(ServiceBusSymbols.ManagementSuffix, StringComparison.OrdinalIgnoreCase))
            {
                var entity = _broker.FindQueue(address[..^ServiceBusSymbols.ManagementSuffix.Length])
                    ?? throw Error(ServiceBusSymbols.EntityNotFound, $"The messaging entity '{address}' could not be found.");
                AttachRequests(receiver, address, request => _management.HandleAsync(entity, request));
            }
            else
            {
                var queue = _broker.FindQueue(address);
                var topic = queue is null ? _broker.FindTopic(address) : null;
                if ((queue is null && topic is null) || queue?.IsDeadLetterQueue == true)
                {
                    throw Error(ServiceBusSymbols.EntityNotFound, $"The messaging entity '{address}' could not be found.");
                }

                PublisherLink.Attach(_broker, receiver, queue, topic);
            }

            return;
        }

        var sender = (SendingAmqpLink)link;
        var sourceAddress = AddressOf(link.Settings.Source) ?? throw Error(ServiceBusSymbols.ArgumentError, "The source address is missing.");
        if (string.Equals(sourceAddress, ServiceBusSymbols.CbsAddress, StringComparison.Ordinal) || sourceAddress.EndsWith(ServiceBusSymbols.ManagementSuffix, StringComparison.OrdinalIgnoreCase))
        {
            var replyTo = AddressOf(link.Settings.Target) ?? throw Error(ServiceBusSymbols.ArgumentError, "The reply link needs a target address.");
            var key = ReplyKey(sourceAddress, replyTo);
            _replyLinks[key] = sender;
            sender.SafeAddClosed((_, _) => _replyLinks.TryRemove(new KeyValuePair<string, SendingAmqpLink>(key, sender)));
            return;
        }

        var consumerQueue = _broker.FindQueue(sourceAddress)
            ?? throw Error(ServiceBusSymbols.EntityNotFound, $"The messaging entity '{sourceAddress}' could not be found.");
        await AttachConsumerAsync(sender, consumerQueue).ConfigureAwait(false);
    }

    private async Task AttachConsumerAsync(SendingAmqpLink link, ServiceBusTestQueue queue)
    {
        var source = (Source)link.Settings.Source;
        var sessionRequested = false;
        string? requestedSession = null;
        if (source.FilterSet is { } filters)
        {
            foreach (var filter in filters)
            {
                if (filter.Key.Key is Microsoft.Azure.Amqp.Encoding.AmqpSymbol symbol && symbol.Equals(ServiceBusSymbols.SessionFilter))
                {
                    sessionRequested = true;
                    requestedSession = filter.Value as string;
                }
            }
        }

        if (queue.RequiresSession && !sessionRequested)
        {
            throw Error(ServiceBusSymbols.NotAllowed, $"It is not possible for an entity that requires sessions ('{queue.Path}') to create a non-sessionful message receiver.");
        }

        if (!queue.RequiresSession && sessionRequested)
        {
            throw Error(ServiceBusSymbols.NotAllowed, $"It is not possible for a session receiver to read '{queue.Path}', which does not require sessions.");
        }

        if (_broker.Faults.Take(ServiceBusTestOperations.Receive) is { } fault)
        {
            var (condition, description) = FaultErrors.For(fault, sessionRequested);
            throw Error(condition, description);
        }

        var consumer = new ConsumerLink(_broker, link, queue);
        if (sessionRequested)
        {
            var session = await AcquireSessionAsync(link, queue, consumer, requestedSession).ConfigureAwait(false);
            consumer.SessionId = session.SessionId;
            source.FilterSet![ServiceBusSymbols.SessionFilter] = session.SessionId;
            link.Settings.Properties ??= new Fields();
            link.Settings.Properties[ServiceBusSymbols.LockedUntilUtc] = session.LockedUntil.UtcDateTime.Ticks;
        }

        lock (_consumers)
        {
            _consumers.Add(consumer);
        }

        link.SafeAddClosed((_, _) =>
        {
            lock (_consumers)
            {
                _consumers.Remove(consumer);
            }
        });
        consumer.Start();
    }

    private async Task<SessionLock> AcquireSessionAsync(SendingAmqpLink link, ServiceBusTestQueue queue, ConsumerLink consumer, string? requested)
    {
        var waiter = new SessionWaiter(queue, consumer);
        var session = _broker.Operate(now =>
        {
            var acquired = queue.TryAcquireSessionLocked(consumer, requested, now);
            if (acquired is null && requested is null)
            {
                _broker.AddSessionWaiterLocked(waiter);
            }

            return acquired;
        });
        if (session is not null)
        {
            return session;
        }

        if (requested is not null)
        {
            throw Error(ServiceBusSymbols.SessionCannotBeLocked, $"The requested session '{requested}' cannot be accepted. It may be locked by another receiver.");
        }

        var timeout = TimeSpan.FromSeconds(60);
        if (link.Settings.Properties is { } properties && properties.TryGetValue<uint>(ServiceBusSymbols.Timeout, out var milliseconds))
        {
            timeout = TimeSpan.FromMilliseconds(milliseconds);
        }

        link.SafeAddClosed((_, _) =>
        {
            if (_broker.RemoveSessionWaiter(waiter))
            {
                waiter.Fail(new OperationCanceledException("The link closed while waiting for a session."));
            }
        });
        try
        {
            return await waiter.Accepted.WaitAsync(timeout, _broker.TimeProvider).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            if (_broker.RemoveSessionWaiter(waiter))
            {
                throw Error(ServiceBusSymbols.Timeout, $"No session of '{queue.Path}' became available within {timeout}.");
            }

            return await waiter.Accepted.ConfigureAwait(false);
        }
    }
}
