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

    /// <summary>The loopback port to listen on; 0 (the default) picks any free port.</summary>
    public int Port { get; set; }

    /// <summary>The shared access key name written into <see cref="ServiceBusTestBroker.ConnectionString"/>. Not validated by the broker.</summary>
    public string KeyName { get; set; } = "RootManageSharedAccessKey";

    /// <summary>The shared access key written into <see cref="ServiceBusTestBroker.ConnectionString"/>. Not validated by the broker.</summary>
    public string Key { get; set; } = "U2VydmljZUJ1c1Rlc3RCcm9rZXJLZXk=";
}
