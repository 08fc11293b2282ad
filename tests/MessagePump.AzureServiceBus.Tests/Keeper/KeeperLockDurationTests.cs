namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Keeper;

/// <summary>
/// Issue 33: the Service Bus keeper adapter told the keeper the lock LEFT at hand-off as the entity's lock duration, so a
/// message kept late in its lock was renewed as if its lock were that short, and the missing lock counted as time on
/// the way to the broker (69 renew calls for 8 messages of 8 s with 5 s locks in a user trial). The adapter's hint now
/// learns the duration from the renewals: it starts as the lock left, the first answer replaces it with the expiry the
/// renewal set less the time it was sent (the duration plus the way to the broker), and later answers can only bring it
/// closer (the least seen). Virtual time.
/// </summary>
public sealed class KeeperLockDurationTests
{
    [Fact]
    public void The_lock_duration_hint_learns_the_entity_s_lock_duration_from_the_renewals()
    {
        var clock = new VirtualTimeProvider();
        var hint = new LockDurationHint(TimeSpan.FromSeconds(2), clock); // kept with 2 s left of a 5 s lock
        hint.LockDuration.Should().Be(TimeSpan.FromSeconds(2), "before any renewal the lock left is all that is known");

        var sentAt = hint.Now;
        clock.Advance(TimeSpan.FromSeconds(1)); // the answer took 1 s; the request reached the broker after 200 ms
        hint.Learn(sentAt, sentAt + TimeSpan.FromMilliseconds(200) + TimeSpan.FromSeconds(5));
        hint.LockDuration.Should().Be(TimeSpan.FromMilliseconds(5200), "the lock duration plus the way to the broker");

        sentAt = hint.Now;
        hint.Learn(sentAt, sentAt + TimeSpan.FromMilliseconds(10) + TimeSpan.FromSeconds(5));
        hint.LockDuration.Should().Be(TimeSpan.FromMilliseconds(5010), "a quicker way to the broker tells the duration more closely");

        sentAt = hint.Now;
        hint.Learn(sentAt, sentAt + TimeSpan.FromSeconds(1) + TimeSpan.FromSeconds(5));
        hint.LockDuration.Should().Be(TimeSpan.FromMilliseconds(5010), "a slower one tells nothing new");

        hint.Learn(hint.Now, hint.Now - TimeSpan.FromSeconds(1));
        hint.LockDuration.Should().Be(TimeSpan.FromMilliseconds(5010), "an expiry before the send is no answer about the duration");
    }
}
