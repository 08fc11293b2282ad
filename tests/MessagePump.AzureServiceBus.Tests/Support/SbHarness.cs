using PriorityAsync.MessagePump.AzureServiceBus.Testing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

/// <summary>The test broker and a <see cref="ServiceBusTransport"/> on it (the real SDK client, short retries), disposed together.</summary>
internal sealed class SbHarness : TestBrokerHarness<TimeProvider>
{
    private SbHarness(ServiceBusTestBroker broker, ServiceBusTransport transport, TimeProvider clock)
        : base(broker, clock)
    {
        Transport = transport;
    }

    public ServiceBusTransport Transport { get; }

    /// <summary>The broker's clock as the virtual one it is when the harness was started with <c>virtualTime</c>.</summary>
    public VirtualTimeProvider VirtualClock => (VirtualTimeProvider)Clock;

    /// <summary>Starts a broker on the system clock, or on a virtual clock started now (whole milliseconds, as AMQP carries them).</summary>
    public static async Task<SbHarness> StartAsync(bool virtualTime = false, int maxRetries = 2)
    {
        TimeProvider clock = virtualTime ? new VirtualTimeProvider(WholeMillisecondsNow()) : TimeProvider.System;
        var broker = await StartBrokerAsync(clock);
        var transport = new ServiceBusTransport(broker.ConnectionString, new ServiceBusTransportOptions
        {
            ReadEntityProperties = false, // the test broker speaks AMQP only: no management endpoint
            ClientOptions = ClientOptions(maxRetries),
        });
        return new SbHarness(broker, transport, clock);
    }

    protected override ValueTask DisposeClientAsync() => Transport.DisposeAsync();
}
