using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// Creates a <see cref="ServiceBusPumpProcessor"/> (and a <see cref="ServiceBusPumpSessionProcessor"/>) the way <see cref="ServiceBusClient.CreateProcessor(string, ServiceBusProcessorOptions)"/>
/// creates a <see cref="ServiceBusProcessor"/>.
/// </summary>
public static class ServiceBusClientPumpExtensions
{
    /// <summary>Creates a processor for a queue on <paramref name="client"/> (which the caller disposes after the processor).</summary>
    /// <param name="client">The client.</param>
    /// <param name="queueName">The queue's name.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <returns>The processor; set its handlers, then start it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="client"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="queueName"/> is empty, or an option breaks its rule (the exception names it).</exception>
    public static ServiceBusPumpProcessor CreatePumpProcessor(this ServiceBusClient client, string queueName, ServiceBusPumpProcessorOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(client);
        return new ServiceBusPumpProcessor(client, ServiceBusEntity.Queue(queueName), options);
    }

    /// <summary>Creates a processor for a topic subscription on <paramref name="client"/> (which the caller disposes after the processor).</summary>
    /// <param name="client">The client.</param>
    /// <param name="topicName">The topic's name.</param>
    /// <param name="subscriptionName">The subscription's name.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <returns>The processor; set its handlers, then start it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="client"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="topicName"/> or <paramref name="subscriptionName"/> is empty, or an option breaks its rule.</exception>
    public static ServiceBusPumpProcessor CreatePumpProcessor(this ServiceBusClient client, string topicName, string subscriptionName, ServiceBusPumpProcessorOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(client);
        return new ServiceBusPumpProcessor(client, ServiceBusEntity.Subscription(topicName, subscriptionName), options);
    }

    /// <summary>
    /// Creates a session processor for a session-enabled queue on <paramref name="client"/> (which the caller disposes
    /// after the processor), as <see cref="ServiceBusClient.CreateSessionProcessor(string, ServiceBusSessionProcessorOptions)"/>.
    /// </summary>
    /// <param name="client">The client.</param>
    /// <param name="queueName">The queue's name.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <returns>The session processor; set its handlers, then start it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="client"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="queueName"/> is empty, or an option breaks its rule (the exception names it).</exception>
    public static ServiceBusPumpSessionProcessor CreatePumpSessionProcessor(this ServiceBusClient client, string queueName, ServiceBusPumpSessionProcessorOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(client);
        return new ServiceBusPumpSessionProcessor(client, ServiceBusEntity.Queue(queueName), options);
    }

    /// <summary>Creates a session processor for a session-enabled topic subscription on <paramref name="client"/> (which the caller disposes after the processor).</summary>
    /// <param name="client">The client.</param>
    /// <param name="topicName">The topic's name.</param>
    /// <param name="subscriptionName">The subscription's name.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <returns>The session processor; set its handlers, then start it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="client"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="topicName"/> or <paramref name="subscriptionName"/> is empty, or an option breaks its rule.</exception>
    public static ServiceBusPumpSessionProcessor CreatePumpSessionProcessor(this ServiceBusClient client, string topicName, string subscriptionName, ServiceBusPumpSessionProcessorOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(client);
        return new ServiceBusPumpSessionProcessor(client, ServiceBusEntity.Subscription(topicName, subscriptionName), options);
    }
}
