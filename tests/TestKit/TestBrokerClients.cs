using Azure.Messaging.ServiceBus;

namespace PriorityAsync.TestKit;

/// <summary>
/// What the tests on the in-process Service Bus test broker share: the client settings (short, fixed retries) and the
/// start time of a virtual clock the broker and the client agree on to the millisecond.
/// </summary>
public static class TestBrokerClients
{
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

    /// <summary>
    /// Returns the current UTC time cut to whole milliseconds: AMQP timestamps (x-opt-locked-until) carry milliseconds,
    /// so a clock started there lets the client see the broker's times exactly.
    /// </summary>
    /// <returns>The current time in whole milliseconds.</returns>
    public static DateTimeOffset WholeMillisecondsNow()
    {
        var now = DateTimeOffset.UtcNow;
        return now - TimeSpan.FromTicks(now.Ticks % TimeSpan.TicksPerMillisecond);
    }
}
