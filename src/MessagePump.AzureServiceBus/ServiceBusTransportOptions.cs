using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>The options of a <see cref="ServiceBusTransport"/>.</summary>
public sealed class ServiceBusTransportOptions
{
    /// <summary>
    /// Gets or sets whether opening a source reads the entity's lock duration and session setting through the
    /// administration client. Needs the Manage right; without it (or when the namespace does not answer management
    /// requests, as the emulator's AMQP port does not) the source falls back to <see cref="ServiceBusSourceOptions.LockDuration"/>.
    /// Default <see langword="true"/>.
    /// </summary>
    public bool ReadEntityProperties { get; set; } = true;

    /// <summary>Gets or sets the options of the <see cref="ServiceBusClient"/> the transport creates; <see langword="null"/> for the SDK's defaults.</summary>
    public ServiceBusClientOptions? ClientOptions { get; set; }

    /// <summary>Copies the options (the client options are shared, not copied).</summary>
    /// <returns>The copy.</returns>
    internal ServiceBusTransportOptions Clone() => (ServiceBusTransportOptions)MemberwiseClone();
}
