namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>Waits before a retry; false when the lock has no time left for one.</summary>
    private async Task<bool> RetryDelayAsync(MessageContext context, Exception failure, string operation, CancellationToken token)
    {
        var remaining = context.Message.LockedUntil - TimeProvider.GetUtcNow();
        var delay = TimeSpan.FromTicks(Math.Min(_options.TransientRetryDelay.Ticks, remaining.Ticks / 2));
        if (delay < MinRetryDelay)
        {
            return false;
        }

        _events.TransientFailure(failure, operation, context.Message.MessageId, delay);
        await Task.Delay(delay, TimeProvider, token);
        return true;
    }

    /// <summary>
    /// Records a lost lease once per delivery and cancels the handler. The lease keeper gives way to a settlement
    /// already under way: that settlement reports the loss itself if its own call finds the lease gone.
    /// </summary>
    private void OnLeaseLost(MessageContext context, Exception? exception, string operation, bool byLeaseKeeper)
    {
        if (byLeaseKeeper && !context.TryClaim())
        {
            return;
        }

        if (context.TryMarkLost())
        {
            _events.LeaseLost(exception, context.Message.MessageId, operation);
        }

        context.CancelHandler();
        context.EndSettlement(); // nothing left to settle for this delivery
    }
}
