using System.Diagnostics.CodeAnalysis;
using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Hosting;

/// <summary>
/// The Service Bus source of a hosted pump, as configuration holds it (see
/// <see cref="Microsoft.Extensions.DependencyInjection.ServiceBusMessagePumpServiceCollectionExtensions"/>): where to connect,
/// what to receive from, and the source's options.
/// </summary>
public sealed class ServiceBusSourceSettings
{
    /// <summary>Gets or sets a connection string (shared access key, or the emulator's). Set this or <see cref="FullyQualifiedNamespace"/>.</summary>
    public string? ConnectionString { get; set; }

    /// <summary>
    /// Gets or sets the namespace's host name (<c>NAMESPACE.servicebus.windows.net</c>), reached with the
    /// <see cref="Azure.Core.TokenCredential"/> registered in the container (for example <c>DefaultAzureCredential</c>).
    /// Set this or <see cref="ConnectionString"/>.
    /// </summary>
    public string? FullyQualifiedNamespace { get; set; }

    /// <summary>Gets or sets the queue to receive from. Set this, or <see cref="TopicName"/> and <see cref="SubscriptionName"/>.</summary>
    public string? QueueName { get; set; }

    /// <summary>Gets or sets the topic whose <see cref="SubscriptionName"/> to receive from.</summary>
    public string? TopicName { get; set; }

    /// <summary>Gets or sets the subscription of <see cref="TopicName"/> to receive from.</summary>
    public string? SubscriptionName { get; set; }

    /// <summary>
    /// Gets or sets how many sessions to hold at once on a session-enabled entity; 0 (the default) for an entity
    /// without sessions.
    /// </summary>
    public int MaxConcurrentSessions { get; set; }

    /// <summary>
    /// Gets the source's options (sub-queue, lock duration, prefetch count, receive wait): set them here, the one place
    /// they are set for a hosted Service Bus pump. Configuration binds them from the same section as the settings
    /// (<c>"LockDuration"</c>, <c>"PrefetchCount"</c>, <c>"MaxWaitTime"</c>, <c>"SubQueue"</c>). A sub-queue has no
    /// sessions: it cannot be combined with <see cref="MaxConcurrentSessions"/>.
    /// </summary>
    public ServiceBusSourceOptions Source { get; } = new();

    /// <summary>Gets the entity the settings name.</summary>
    /// <returns>The queue or the subscription.</returns>
    /// <exception cref="ArgumentException">The settings name no entity, or both a queue and a topic.</exception>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "The settings object is checked as a whole; ParamName names the offending setting, as ServiceBusSourceOptions.Validate does.")]
    [SuppressMessage("Usage", "CA2208:Instantiate argument exceptions correctly", Justification = "The settings object is checked as a whole; ParamName names the offending setting, as ServiceBusSourceOptions.Validate does.")]
    internal ServiceBusEntity ToEntity()
    {
        var hasQueue = !string.IsNullOrWhiteSpace(QueueName);
        var hasTopic = !string.IsNullOrWhiteSpace(TopicName) || !string.IsNullOrWhiteSpace(SubscriptionName);
        return (hasQueue, hasTopic) switch
        {
            (true, false) => ServiceBusEntity.Queue(QueueName!),
            (false, true) when !string.IsNullOrWhiteSpace(TopicName) && !string.IsNullOrWhiteSpace(SubscriptionName) => ServiceBusEntity.Subscription(TopicName!, SubscriptionName!),
            (false, true) => throw new ArgumentException("A subscription needs both TopicName and SubscriptionName.", nameof(SubscriptionName)),
            (true, true) => throw new ArgumentException("Set QueueName, or TopicName and SubscriptionName, not both.", nameof(QueueName)),
            _ => throw new ArgumentException("Name the entity to receive from: QueueName, or TopicName and SubscriptionName.", nameof(QueueName)),
        };
    }

    /// <summary>Gets the source's options the settings hold.</summary>
    /// <returns>The options, validated.</returns>
    /// <exception cref="ArgumentOutOfRangeException">An option breaks its rule; the exception names it.</exception>
    internal ServiceBusSourceOptions ToSourceOptions()
    {
        var options = Source.Clone();
        options.Validate();
        return options;
    }

    /// <summary>Throws when the settings are incomplete or contradict each other.</summary>
    /// <exception cref="ArgumentException">A setting breaks its rule; the exception names it.</exception>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "The settings object is checked as a whole; ParamName names the offending setting, as ServiceBusSourceOptions.Validate does.")]
    [SuppressMessage("Usage", "CA2208:Instantiate argument exceptions correctly", Justification = "The settings object is checked as a whole; ParamName names the offending setting, as ServiceBusSourceOptions.Validate does.")]
    internal void Validate()
    {
        var hasConnectionString = !string.IsNullOrWhiteSpace(ConnectionString);
        var hasNamespace = !string.IsNullOrWhiteSpace(FullyQualifiedNamespace);
        if (hasConnectionString == hasNamespace)
        {
            throw new ArgumentException("Set exactly one of ConnectionString and FullyQualifiedNamespace (with a TokenCredential registered in the container).", nameof(ConnectionString));
        }

        if (hasConnectionString)
        {
            try
            {
                ServiceBusTransport.ValidateConnectionString(ConnectionString!);
            }
            catch (ArgumentException ex)
            {
                throw new ArgumentException(ex.Message, nameof(ConnectionString), ex);
            }
        }

        if (MaxConcurrentSessions < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxConcurrentSessions), MaxConcurrentSessions, "MaxConcurrentSessions must not be negative (0: the entity has no sessions).");
        }

        if (MaxConcurrentSessions > 0 && Source.SubQueue != SubQueue.None)
        {
            throw new ArgumentException($"SubQueue is {Source.SubQueue}, but a dead-letter sub-queue has no sessions: set MaxConcurrentSessions to 0 to receive from it.", nameof(SubQueue));
        }

        ToEntity();
        ToSourceOptions();
    }
}
