namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>Options for <see cref="ServiceBusTestBroker.StartAsync(ServiceBusTestBrokerOptions?, CancellationToken)"/>.</summary>
public sealed class ServiceBusTestBrokerOptions
{
    /// <summary>
    /// The clock on which the broker judges locks (lock expiry, renewals, session locks) and stamps enqueued times.
    /// Tests pass a fake clock (for example Microsoft.Extensions.Time.Testing.FakeTimeProvider started at the current
    /// UTC time) and advance it to expire locks deterministically. Defaults to <see cref="TimeProvider.System"/>.
    /// </summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>The Standard tier's largest message: 256 KB.</summary>
    public const long StandardMaxMessageSizeInBytes = 256 * 1024;

    /// <summary>The Premium tier's largest message: 100 MB (an entity's limit there is 1 MB unless raised).</summary>
    public const long PremiumMaxMessageSizeInBytes = 100 * 1024 * 1024;

    /// <summary>
    /// The largest message a sender may send, in bytes: the max-message-size of the broker's end of every send link
    /// (the client checks messages and batches against it; a larger transfer is refused). Defaults to the Standard
    /// tier's <see cref="StandardMaxMessageSizeInBytes"/>; a Premium entity allows 1 MB by default and up to
    /// <see cref="PremiumMaxMessageSizeInBytes"/>.
    /// </summary>
    public long MaxMessageSizeInBytes { get; set; } = StandardMaxMessageSizeInBytes;

    /// <summary>The loopback port to listen on; 0 (the default) picks any free port.</summary>
    public int Port { get; set; }

    /// <summary>The shared access key name written into <see cref="ServiceBusTestBroker.ConnectionString"/>. Not validated by the broker.</summary>
    public string KeyName { get; set; } = "RootManageSharedAccessKey";

    /// <summary>The shared access key written into <see cref="ServiceBusTestBroker.ConnectionString"/>. Not validated by the broker.</summary>
    public string Key { get; set; } = "U2VydmljZUJ1c1Rlc3RCcm9rZXJLZXk=";
}
