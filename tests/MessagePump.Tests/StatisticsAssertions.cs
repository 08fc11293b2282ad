using PriorityAsync.Messaging;

namespace PriorityAsync.Messaging.Tests;

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
}
