namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>A Service Bus entity a source receives from: a queue, or a subscription of a topic.</summary>
public sealed class ServiceBusEntity : IEquatable<ServiceBusEntity>
{
    private ServiceBusEntity(string queueOrTopic, string? subscription)
    {
        QueueOrTopicName = queueOrTopic;
        SubscriptionName = subscription;
    }

    /// <summary>Gets the queue's name, or the topic's name for a subscription.</summary>
    public string QueueOrTopicName { get; }

    /// <summary>Gets the subscription's name, or <see langword="null"/> for a queue.</summary>
    public string? SubscriptionName { get; }

    /// <summary>Gets whether the entity is a topic subscription.</summary>
    public bool IsSubscription => SubscriptionName is not null;

    /// <summary>Gets the entity's path as Service Bus names it: <c>queue</c>, or <c>topic/Subscriptions/subscription</c>.</summary>
    public string Path => SubscriptionName is null ? QueueOrTopicName : $"{QueueOrTopicName}/Subscriptions/{SubscriptionName}";

    /// <summary>Names a queue.</summary>
    /// <param name="queueName">The queue's name.</param>
    /// <returns>The entity.</returns>
    /// <exception cref="ArgumentException"><paramref name="queueName"/> is null, empty or white space.</exception>
    public static ServiceBusEntity Queue(string queueName)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(queueName);
        return new ServiceBusEntity(queueName, subscription: null);
    }

    /// <summary>Names a subscription of a topic.</summary>
    /// <param name="topicName">The topic's name.</param>
    /// <param name="subscriptionName">The subscription's name.</param>
    /// <returns>The entity.</returns>
    /// <exception cref="ArgumentException"><paramref name="topicName"/> or <paramref name="subscriptionName"/> is null, empty or white space.</exception>
    public static ServiceBusEntity Subscription(string topicName, string subscriptionName)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(topicName);
        ArgumentException.ThrowIfNullOrWhiteSpace(subscriptionName);
        return new ServiceBusEntity(topicName, subscriptionName);
    }

    /// <inheritdoc />
    public bool Equals(ServiceBusEntity? other) =>
        other is not null
        && string.Equals(QueueOrTopicName, other.QueueOrTopicName, StringComparison.OrdinalIgnoreCase)
        && string.Equals(SubscriptionName, other.SubscriptionName, StringComparison.OrdinalIgnoreCase);

    /// <inheritdoc />
    public override bool Equals(object? obj) => Equals(obj as ServiceBusEntity);

    /// <inheritdoc />
    public override int GetHashCode() => StringComparer.OrdinalIgnoreCase.GetHashCode(Path);

    /// <inheritdoc />
    public override string ToString() => SubscriptionName is null ? $"queue '{QueueOrTopicName}'" : $"subscription '{SubscriptionName}' of topic '{QueueOrTopicName}'";
}
