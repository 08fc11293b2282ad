namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// The size of the next receive (docs/message-pump.md, "Receive batches"): it starts at 1, doubles when the broker
/// filled the ask and the consumer was free again within four round trips, halves when the wait was longer, and stays
/// put on a short or empty answer; never above the batch limit or the free slots.
/// </summary>
public class ReceiveAdmissionTests
{
    private static readonly TimeSpan RoundTrip = TimeSpan.FromMilliseconds(10);

    [Fact]
    public void Ask_StartsAtOne_AndNeverExceedsTheFreeSlots()
    {
        var admission = new ReceiveAdmission(100);
        admission.Ask.Should().Be(1);
        admission.NextAsk(5).Should().Be(1);
        Grow(admission, 3);
        admission.Ask.Should().Be(8);
        admission.NextAsk(5).Should().Be(5);
        admission.NextAsk(8).Should().Be(8);
        admission.NextAsk(20).Should().Be(8);
    }

    [Fact]
    public void FullAnswers_QuickWaits_Double_UpToTheBatchLimit()
    {
        var admission = new ReceiveAdmission(100);
        var asks = new List<int>();
        for (var i = 0; i < 9; i++)
        {
            admission.Observe(admission.Ask, admission.Ask, RoundTrip, 4 * RoundTrip); // at four round trips: still quick
            asks.Add(admission.Ask);
        }

        asks.Should().Equal(2, 4, 8, 16, 32, 64, 100, 100, 100);
    }

    [Fact]
    public void AnyAnswer_AfterAWaitLongerThanFourRoundTrips_Halves_NotBelowOne()
    {
        var admission = new ReceiveAdmission(100);
        Grow(admission, 4);
        var asks = new List<int>();
        for (var i = 0; i < 6; i++)
        {
            admission.Observe(admission.Ask, i % 2 == 0 ? admission.Ask : 1, RoundTrip, (4 * RoundTrip) + TimeSpan.FromTicks(1));
            asks.Add(admission.Ask);
        }

        asks.Should().Equal(8, 4, 2, 1, 1, 1);
    }

    [Fact]
    public void ShortOrEmptyAnswers_LeaveTheAskAsItIs()
    {
        var admission = new ReceiveAdmission(100);
        Grow(admission, 3);

        admission.Observe(8, 7, RoundTrip, TimeSpan.Zero);
        admission.Ask.Should().Be(8, "a short batch: the queue ran low");
        admission.Observe(8, 0, RoundTrip, TimeSpan.FromHours(1));
        admission.Ask.Should().Be(8, "an empty answer says nothing about the consumer's work");
    }

    [Fact]
    public void AFullAnswer_ToAnAskCutByTheFreeSlots_DoesNotDouble()
    {
        var admission = new ReceiveAdmission(100);
        Grow(admission, 3);

        admission.Observe(5, 5, RoundTrip, TimeSpan.Zero);
        admission.Ask.Should().Be(8, "the broker filled only part of the ask");
        admission.Observe(8, 8, RoundTrip, TimeSpan.Zero);
        admission.Ask.Should().Be(16);
    }

    private static void Grow(ReceiveAdmission admission, int doublings)
    {
        for (var i = 0; i < doublings; i++)
        {
            admission.Observe(admission.Ask, admission.Ask, RoundTrip, TimeSpan.Zero);
        }
    }
}
