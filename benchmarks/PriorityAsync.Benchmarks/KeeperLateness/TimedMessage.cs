using PriorityAsync.Benchmarks.Infrastructure;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.KeeperLateness;

/// <summary>A broker's message whose single renewals are timed in a <see cref="LatenessLog"/>; everything else is the broker's own.</summary>
internal sealed class TimedMessage(ILeasedMessage inner, LatenessLog log) : ForwardingMessage(inner)
{
    public override async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
    {
        var expiry = Inner.LockedUntil;
        var sent = log.Now;
        log.CallSent();
        var lockedUntil = await Inner.RenewLockAsync(cancellationToken);
        log.Renewed(this, expiry, sent);
        return lockedUntil;
    }
}
