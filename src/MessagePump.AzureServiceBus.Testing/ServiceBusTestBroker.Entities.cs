using PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

public sealed partial class ServiceBusTestBroker
{
    internal static void ValidateEntityName(string name, string paramName)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name, paramName);
        if (name.StartsWith('/') || name.EndsWith('/') || name.Contains('$', StringComparison.Ordinal) || name.Any(char.IsWhiteSpace))
        {
            throw new ArgumentException($"'{name}' is not a valid entity name: no leading or trailing '/', no '$', no white space.", paramName);
        }
    }

    /// <summary>
    /// Deletes a queue made with <see cref="CreateQueue"/>, with its dead-letter sub-queue and messages, as the service
    /// does: the receive links on it are detached with <c>amqp:not-found</c> (the SDK's <c>MessagingEntityNotFound</c>),
    /// and every later attach is refused the same way until a queue of that name is created again.
    /// </summary>
    /// <param name="name">The queue's name.</param>
    /// <returns>A task that completes when the receive links on the queue are detached.</returns>
    /// <exception cref="ArgumentException">The broker has no queue of that name (a subscription or a dead-letter sub-queue is not one).</exception>
    public Task DeleteQueueAsync(string name)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        lock (Sync)
        {
            var path = name.Trim('/');
            if (!_queues.TryGetValue(path, out var queue) || queue.IsDeadLetterQueue || path.Contains("/Subscriptions/", StringComparison.OrdinalIgnoreCase))
            {
                throw new ArgumentException($"The broker has no queue '{name}' to delete.", nameof(name));
            }

            _queues.Remove(path);
            _queues.Remove(queue.DeadLetterQueue!.Path);
        }

        return DetachConsumersAsync(name, ServiceBusSymbols.EntityNotFound, $"The messaging entity '{name}' has been deleted.");
    }

    internal ServiceBusTestQueue AddQueue(string path, ServiceBusTestEntityOptions? options, string paramName)
    {
        options ??= new ServiceBusTestEntityOptions();
        if (options.LockDuration <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(options), options.LockDuration, "options.LockDuration must be positive.");
        }

        if (options.DefaultMessageTimeToLive <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(options), options.DefaultMessageTimeToLive, "options.DefaultMessageTimeToLive must be positive.");
        }

        if (options.MaxDeliveryCount < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(options), options.MaxDeliveryCount, "options.MaxDeliveryCount must be at least 1.");
        }
        lock (Sync)
        {
            ThrowIfTaken(path, paramName);
            var queue = new ServiceBusTestQueue(this, path, options, isDeadLetterQueue: false);
            _queues.Add(path, queue);
            _queues.Add(queue.DeadLetterQueue!.Path, queue.DeadLetterQueue);
            return queue;
        }
    }

    internal ServiceBusTestQueue? FindQueue(string path)
    {
        lock (Sync)
        {
            return _queues.GetValueOrDefault(path.Trim('/'));
        }
    }

    internal ServiceBusTestTopic? FindTopic(string path)
    {
        lock (Sync)
        {
            return _topics.GetValueOrDefault(path.Trim('/'));
        }
    }

    private void ThrowIfTaken(string path, string paramName)
    {
        if (_queues.ContainsKey(path) || _topics.ContainsKey(path))
        {
            throw new ArgumentException($"The broker already has an entity at '{path}'.", paramName);
        }
    }
}
