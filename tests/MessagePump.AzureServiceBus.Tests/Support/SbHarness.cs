using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

/// <summary>The test broker and a <see cref="ServiceBusTransport"/> on it (the real SDK client, short retries), disposed together.</summary>
internal sealed class SbHarness : IAsyncDisposable
{
    /// <summary>A bound that only turns a hang into a failure; never a speed assertion.</summary>
    public static readonly TimeSpan HangBound = Bounded.Patient;

    private SbHarness(ServiceBusTestBroker broker, ServiceBusTransport transport, TimeProvider clock)
    {
        Broker = broker;
        Transport = transport;
        Clock = clock;
    }

    public ServiceBusTestBroker Broker { get; }

    public ServiceBusTransport Transport { get; }

    /// <summary>The broker's clock: the system's, or a virtual one started at the current time.</summary>
    public TimeProvider Clock { get; }

    public VirtualTimeProvider VirtualClock => (VirtualTimeProvider)Clock;

    /// <summary>Starts a broker on the system clock, or on a virtual clock started now (whole milliseconds, as AMQP carries them).</summary>
    public static async Task<SbHarness> StartAsync(bool virtualTime = false, int maxRetries = 2)
    {
        TimeProvider clock = virtualTime ? new VirtualTimeProvider(TestBrokerClients.WholeMillisecondsNow()) : TimeProvider.System;

        var broker = await ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions { TimeProvider = clock });
        var transport = new ServiceBusTransport(broker.ConnectionString, new ServiceBusTransportOptions
        {
            ReadEntityProperties = false, // the test broker speaks AMQP only: no management endpoint
            ClientOptions = ClientOptions(maxRetries),
        });
        return new SbHarness(broker, transport, clock);
    }

    public static ServiceBusClientOptions ClientOptions(int maxRetries = 2) => TestBrokerClients.ClientOptions(maxRetries);

    public async ValueTask DisposeAsync()
    {
        await Transport.DisposeAsync();
        await Broker.DisposeAsync();
    }
}
