namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>
    /// Runs the handler in the processing lane (the first step of a message's processing, started by
    /// <see cref="MessageContext.StartProcessing"/> as tracked work of the processing lane). The steps are driven by the
    /// message's own context, not by an async method: no state machine, delegate or task per message when the handler
    /// and the settlement complete at once, and a continuation only when one of them does not.
    /// </summary>
    internal void RunHandler(MessageContext context)
    {
        if (context.IsClaimed)
        {
            // The lease keeper found the lease lost (or the stop path claimed the message) before the handler started:
            // the broker may already deliver the message elsewhere, so this delivery never reaches the handler.
            EndProcessing(context);
            return;
        }

        Task? handled = null;
        try
        {
            context.ProcessStart = TimeProvider.GetTimestamp();
            context.ProcessSpan = _events.Processing(context.Message); // Activity.Current inside the handler
            handled = _handler(context, context.CancellationToken)
                ?? throw new InvalidOperationException("The message handler returned null; it must return a task.");
        }
        catch (Exception ex)
        {
            context.ProcessFailure = ex;
        }

        if (handled is null || handled.IsCompleted)
        {
            OnHandled(context, handled);
        }
        else
        {
            context.ContinueWhenDone(handled, MessageContext.ProcessingStep.Handled);
        }
    }

    /// <summary>
    /// The handler has returned (<paramref name="handled"/> is its task, or <see langword="null"/> when it threw):
    /// records it, then settles in the lease lane.
    /// </summary>
    internal void OnHandled(MessageContext context, Task? handled)
    {
        try
        {
            if (handled is not null)
            {
                try
                {
#pragma warning disable VSTHRD002 // The task has completed (IsCompleted, or this is its continuation): nothing waits.
                    handled.GetAwaiter().GetResult(); // the handler's exception, as await would throw it
#pragma warning restore VSTHRD002
                }
                catch (Exception ex)
                {
                    context.ProcessFailure = ex;
                }
            }

            _events.Processed(context.ProcessSpan, TimeProvider.GetElapsedTime(context.ProcessStart), context.ProcessFailure);
            context.ProcessSpan = null;
        }
        finally
        {
            // Settling releases the lock: as urgent as keeping it.
            context.ContinueIn(LeaseLane, MessageContext.ProcessingStep.Settle);
        }
    }

    /// <summary>Settles the handled message, in the lease lane, unless it was claimed meanwhile; then finishes it.</summary>
    internal void Settle(MessageContext context)
    {
        Task<bool>? settling = null;
        try
        {
            if (context.IsClaimed)
            {
                // The lease was lost or the message was settled (dead-lettered by the handler, abandoned at stop).
            }
            else if (context.ProcessFailure is not { } failure)
            {
                settling = SettleAsync(context, Settlement.Complete);
            }
            else
            {
                _events.HandlerFailed(context.Message, failure);
                settling = SettleAsync(context, Settlement.Abandon);
            }
        }
        finally
        {
            if (settling is null || settling.IsCompleted)
            {
                EndProcessing(context);
            }
            else
            {
                FreeSlotAtSettlement(context); // the handler has returned and its settlement is on its way
                context.ContinueWhenDone(settling, MessageContext.ProcessingStep.Settled);
            }
        }
    }

    /// <summary>
    /// The last step: finishes the message and ends the processing lane's tracked work (a graceful stop of the
    /// scheduler waits for it, as for <see cref="Lane.Run(Func{Task})"/>); then tells a message that listens
    /// (<see cref="IHandlerEndListener"/>) that its handler is over.
    /// </summary>
    internal void EndProcessing(MessageContext context)
    {
        context.ProcessFailure = null;
        try
        {
            Finish(context);
        }
        finally
        {
            ProcessingLane.EndTracked();
            (context.Message as IHandlerEndListener)?.OnHandlerEnded();
        }
    }

    /// <summary>
    /// Drops the message's lease from the keeper's schedule, frees the slot and wakes the receive loop. Called once the message is settled (by the
    /// handler's path, or by the stop path for a handler still running); only the first call counts.
    /// </summary>
    private void Finish(MessageContext context)
    {
        Keeper.Release(context.Lease); // the lease is dropped the moment the message is settled
        context.Finish();
        bool removed;
        lock (_gate)
        {
            removed = _inFlight.Remove(context);
            if (removed && context.IsSettling)
            {
                _settling--;
            }

            SignalCapacityLocked();
            AssertInvariantsLocked();
        }

        if (removed)
        {
            _events.Finished();
        }
    }
}
