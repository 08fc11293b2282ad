using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;

namespace PriorityAsync.TestKit;

/// <summary>
/// The in-process Service Bus test broker on a clock of the test's choice, and a client of the test's choice on it (the
/// SDK's client, or the transport), disposed together, client first. The client settings and the hang bound of every
/// test on the broker.
/// </summary>
/// <typeparam name="TClock">The type of the broker's clock.</typeparam>
public abstract class TestBrokerHarness<TClock> : IAsyncDisposable
    where TClock : TimeProvider
{
    /// <summary>Creates the harness over a started broker.</summary>
    /// <param name="broker">The broker.</param>
    /// <param name="clock">The broker's clock.</param>
    protected TestBrokerHarness(ServiceBusTestBroker broker, TClock clock)
    {
        Broker = broker;
        Clock = clock;
    }

    /// <summary>Gets a bound that only turns a hang into a failure; never a speed assertion (<see cref="Bounded.Patient"/>).</summary>
    public static TimeSpan HangBound => Bounded.Patient;

    /// <summary>Gets the broker.</summary>
    public ServiceBusTestBroker Broker { get; }

    /// <summary>Gets the broker's clock.</summary>
    public TClock Clock { get; }

    /// <summary>Returns client options with fixed retries 50 ms apart (at most 200 ms) and a 10 s try timeout.</summary>
    /// <param name="maxRetries">How many times the client retries a failed call.</param>
    /// <returns>New client options.</returns>
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

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        await DisposeClientAsync().ConfigureAwait(false);
        await Broker.DisposeAsync().ConfigureAwait(false);
        GC.SuppressFinalize(this);
    }

    /// <summary>
    /// Returns the current UTC time cut to whole milliseconds: AMQP timestamps (x-opt-locked-until) carry milliseconds,
    /// so a virtual clock started there lets the client see the broker's times exactly.
    /// </summary>
    /// <returns>The current time in whole milliseconds.</returns>
    protected static DateTimeOffset WholeMillisecondsNow()
    {
        var now = DateTimeOffset.UtcNow;
        return now - TimeSpan.FromTicks(now.Ticks % TimeSpan.TicksPerMillisecond);
    }

    /// <summary>Starts a broker on <paramref name="clock"/>.</summary>
    /// <param name="clock">The broker's clock.</param>
    /// <returns>The started broker.</returns>
    protected static Task<ServiceBusTestBroker> StartBrokerAsync(TClock clock) =>
        ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions { TimeProvider = clock });

    /// <summary>Disposes the client on the broker; called before the broker is disposed.</summary>
    /// <returns>A task that ends when the client is disposed.</returns>
    protected abstract ValueTask DisposeClientAsync();
}
