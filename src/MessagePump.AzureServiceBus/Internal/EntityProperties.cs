using System.Net.Http;
using Azure;
using Azure.Messaging.ServiceBus;
using Azure.Messaging.ServiceBus.Administration;

namespace PriorityAsync.MessagePump.AzureServiceBus.Internal;

/// <summary>What a source needs to know about its entity, read through the administration client.</summary>
internal readonly record struct EntityProperties(TimeSpan LockDuration, bool RequiresSession)
{
    /// <summary>
    /// Reads the entity's lock duration and session setting; <see langword="null"/> when they cannot be read (no Manage
    /// right, no management endpoint). A missing entity is an <see cref="ArgumentException"/> naming it.
    /// </summary>
    public static async Task<EntityProperties?> ReadAsync(ServiceBusAdministrationClient admin, ServiceBusEntity entity, string paramName, CancellationToken cancellationToken)
    {
        try
        {
            if (entity.SubscriptionName is { } subscription)
            {
                var properties = (await admin.GetSubscriptionAsync(entity.QueueOrTopicName, subscription, cancellationToken).ConfigureAwait(false)).Value;
                return new EntityProperties(properties.LockDuration, properties.RequiresSession);
            }

            var queue = (await admin.GetQueueAsync(entity.QueueOrTopicName, cancellationToken).ConfigureAwait(false)).Value;
            return new EntityProperties(queue.LockDuration, queue.RequiresSession);
        }
        catch (ServiceBusException ex) when (ex.Reason == ServiceBusFailureReason.MessagingEntityNotFound)
        {
            throw new ArgumentException($"The Service Bus namespace has no {entity}: create it, or fix the name.", paramName, ex);
        }
        catch (Exception ex) when (IsUnreadable(ex) && !cancellationToken.IsCancellationRequested)
        {
            return null;
        }
    }

    /// <summary>The failures that mean "cannot read the properties here": no Manage right, or no management endpoint.</summary>
    private static bool IsUnreadable(Exception exception) =>
        exception is UnauthorizedAccessException or ServiceBusException or RequestFailedException or HttpRequestException or TimeoutException or IOException or OperationCanceledException;
}
