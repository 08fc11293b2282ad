namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>Runs the handler in the processing lane, then settles the message in the lease lane.</summary>
    private async Task ProcessAsync(MessageContext context)
    {
        try
        {
            var start = TimeProvider.GetTimestamp();
            Exception? failure = null;
            var span = _events.Processing(context.Message); // Activity.Current inside the handler
            try
            {
                await _handler(context, context.CancellationToken);
            }
            catch (Exception ex)
            {
                failure = ex;
            }

            _events.Processed(span, TimeProvider.GetElapsedTime(start), failure);

            // Settling releases the lock: as urgent as keeping it.
            await LeaseLane.SwitchTo();
            if (context.IsClaimed)
            {
                // The lease was lost or the message was settled (dead-lettered by the handler, abandoned at stop).
                return;
            }

            if (failure is null)
            {
                await SettleAsync(context, Settlement.Complete);
                return;
            }

            _events.HandlerFailed(context.Message, failure);
            await SettleAsync(context, Settlement.Abandon);
        }
        finally
        {
            Finish(context);
        }
    }


    /// <summary>
    /// Drops the message's lease from the keeper's schedule, frees the slot and wakes the receive loop. Called once the message is settled (by the
    /// handler's path, or by the stop path for a handler still running); only the first call counts.
    /// </summary>
    private void Finish(MessageContext context)
    {
        context.Finish();
        bool removed;
        lock (_gate)
        {
            _schedule.Remove(context); // the lease is dropped the moment the message is settled
            removed = _inFlight.Remove(context);
            SignalCapacityLocked();
        }

        if (removed)
        {
            _events.Finished();
        }
    }
}
