namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Keeper;

/// <summary>
/// The Service Bus keeper adapter's hint learns the entity's lock duration from the renewals, because the lock LEFT at
/// hand-off is not that duration: taken for it, a message kept late in its lock is renewed as if its lock were that
/// short, and the missing lock counts as time on the way to the broker (dozens of renew calls for a handful of
/// messages). The hint starts as the lock left, the first answer replaces it with the expiry the renewal set less the
/// time it was sent (the duration plus the way to the broker), and later answers can only bring it closer (the least
/// seen). Virtual time.
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
