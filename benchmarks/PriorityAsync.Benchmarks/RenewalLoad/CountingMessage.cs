using PriorityAsync.Benchmarks.Infrastructure;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.RenewalLoad;

/// <summary>A broker's message whose single renew calls are counted; everything else is the broker's own.</summary>
internal sealed class CountingMessage(ILeasedMessage inner, RenewCallCounter counter) : ForwardingMessage(inner)
{
    public override Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
    {
        counter.Count(1);
        return Inner.RenewLockAsync(cancellationToken);
    }
}
