namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// The renewal rule's memory (docs/message-pump.md): the worst of the last 32 renew round trips, and a renewal starts
/// with three times that much lock left.
/// </summary>
public class RenewRoundTripsTests
{
    [Fact]
    public void BeforeTheFirstRenewal_NothingIsRequired()
    {
        var trips = new RenewRoundTrips();
        trips.Worst.Should().Be(TimeSpan.Zero);
        trips.RequiredSlack.Should().Be(TimeSpan.Zero);
    }

    [Fact]
    public void RequiredSlack_IsThreeTimesTheWorstRoundTripOfTheWindow()
    {
        var trips = new RenewRoundTrips();
        trips.Record(TimeSpan.FromMilliseconds(40));
        trips.Record(TimeSpan.FromMilliseconds(100));
        trips.Record(TimeSpan.FromMilliseconds(70));

        trips.Worst.Should().Be(TimeSpan.FromMilliseconds(100));
        trips.RequiredSlack.Should().Be(TimeSpan.FromMilliseconds(300));
    }

    [Fact]
    public void ASlowRoundTrip_IsForgotten_After32Faster_Ones()
    {
        var trips = new RenewRoundTrips();
        trips.Record(TimeSpan.FromSeconds(2));
        for (var i = 1; i < RenewRoundTrips.Window; i++)
        {
            trips.Record(TimeSpan.FromMilliseconds(i));
        }

        trips.Worst.Should().Be(TimeSpan.FromSeconds(2), "31 later round trips: the slow one is still in the window");
        trips.Record(TimeSpan.FromMilliseconds(5));
        trips.Worst.Should().Be(TimeSpan.FromMilliseconds(31), "the 32 latest are 1..31 ms and 5 ms");
        for (var i = 0; i < RenewRoundTrips.Window; i++)
        {
            trips.Record(TimeSpan.FromMilliseconds(3));
        }

        trips.Worst.Should().Be(TimeSpan.FromMilliseconds(3));
    }
}
