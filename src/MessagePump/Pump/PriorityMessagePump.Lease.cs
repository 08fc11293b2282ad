namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>The keeper found a lease lost (a renewal refused, or out of lock time): the lost-lease path below.</summary>
    private void OnKeeperFoundLeaseLost(LeaseHandle lease, Exception? exception)
    {
        System.Diagnostics.Debug.Assert(lease.Context is not null, "Every lease of the pump's keeper belongs to one of its messages.");
        OnLeaseLost(lease.Context, exception, "renew", byLeaseKeeper: true);
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
