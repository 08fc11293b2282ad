using System.Diagnostics.CodeAnalysis;
using PriorityAsync.MessagePump;

namespace PriorityAsync.MessagePump.Tests;

/// <summary>The accounting invariants of the in-memory broker (see docs/message-pump.md).</summary>
internal static class StatisticsAssertions
{
    public static void ShouldBeConsistent(this InMemoryQueueStatistics s)
    {
        s.Sent.Should().Be(s.Completed + s.DeadLettered + s.Available + s.InFlight, "every message is in exactly one place: {0}", s);
        s.Received.Should().Be(
            s.Completed + s.Abandoned + s.LeasesLost + (s.DeadLettered - s.MaxDeliveryDeadLettered) + s.InFlight,
            "every delivery ends exactly once: {0}",
            s);
        (s.Abandoned + s.LeasesLost).Should().Be(
            s.Redelivered + s.MaxDeliveryDeadLettered + s.AwaitingRedelivery,
            "every released delivery is delivered again or dead-lettered: {0}",
            s);
    }

    /// <summary>Once the pump has stopped and its handlers returned: each delivery has exactly one outcome.</summary>
    public static void ShouldBeConsistent([NotNull] this MessagePumpStatistics? s)
    {
        ArgumentNullException.ThrowIfNull(s);
        s.InFlight.Should().Be(0);
        s.Received.Should().Be(s.Completed + s.Abandoned + s.DeadLettered + s.Deferred + s.LeasesLost + s.SettleFailures, "every delivery has one outcome: {0}", s);
        s.AbandonedAtStop.Should().BeLessThanOrEqualTo(s.Abandoned);
    }

    /// <summary>One pump on one queue: the pump's books and the broker's agree.</summary>
    public static void ShouldMatch([NotNull] this MessagePumpStatistics? pump, InMemoryQueueStatistics broker)
    {
        ArgumentNullException.ThrowIfNull(pump);
        pump.Received.Should().Be(broker.Received, "received");
        pump.Completed.Should().Be(broker.Completed, "completed");
        pump.Abandoned.Should().Be(broker.Abandoned, "abandoned");
        pump.DeadLettered.Should().Be(broker.DeadLettered - broker.MaxDeliveryDeadLettered, "dead-lettered by handlers");
        pump.LeasesLost.Should().Be(broker.LeasesLost, "leases lost");
        pump.Renewals.Should().Be(broker.Renewals, "renewals");
    }
}
