using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Time.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;

namespace MessagePump.AzureServiceBus.Testing.Tests;

/// <summary>A broker on a fake clock (started at the current UTC time) and a client with short retries, disposed together.</summary>
internal sealed class BrokerHarness : IAsyncDisposable
{
    /// <summary>A bound that only turns a hang into a failure; never a speed assertion.</summary>
    public static readonly TimeSpan HangBound = TimeSpan.FromSeconds(60);

    private BrokerHarness(ServiceBusTestBroker broker, FakeTimeProvider clock, ServiceBusClient client)
    {
        Broker = broker;
        Clock = clock;
        Client = client;
    }

    public ServiceBusTestBroker Broker { get; }

    public FakeTimeProvider Clock { get; }

    public ServiceBusClient Client { get; }

    public static async Task<BrokerHarness> StartAsync(int maxRetries = 2)
    {
        // Whole milliseconds: AMQP timestamps (x-opt-locked-until) carry milliseconds, so the client sees the broker's times exactly.
        var now = DateTimeOffset.UtcNow;
        var clock = new FakeTimeProvider(now - TimeSpan.FromTicks(now.Ticks % TimeSpan.TicksPerMillisecond));
        var broker = await ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions { TimeProvider = clock });
        var client = new ServiceBusClient(broker.ConnectionString, ClientOptions(maxRetries));
        return new BrokerHarness(broker, clock, client);
    }

    public static ServiceBusClientOptions ClientOptions(int maxRetries = 2) => new()
    {
        RetryOptions = new ServiceBusRetryOptions
        {
            Mode = ServiceBusRetryMode.Fixed,
            MaxRetries = maxRetries,
            Delay = TimeSpan.FromMilliseconds(50),
            MaxDelay = TimeSpan.FromMilliseconds(200),
            TryTimeout = TimeSpan.FromSeconds(10),
        },
    };

    public async ValueTask DisposeAsync()
    {
        await Client.DisposeAsync();
        await Broker.DisposeAsync();
    }
}
