using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

public sealed partial class MessageContext
{
    /// <summary>
    /// Gets a task that completes when the handler has returned and the message is settled, or when the stop path
    /// has settled or given up on the message (the handler may still be running then).
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the pump. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    internal Task Finished => LazyTaskAsync(ref _finished, ref _isFinished);

    /// <summary>
    /// Gets a token canceled when the stop path gives up on this delivery's settlement (its lock expired with renewals
    /// stopped): the settle call and its retry pauses end at once.
    /// </summary>
    internal CancellationToken SettleAbortToken
    {
        get
        {
            var abort = Volatile.Read(ref _settleAbort);
            if (abort is null)
            {
                var created = new CancellationTokenSource();
                abort = Interlocked.CompareExchange(ref _settleAbort, created, null) ?? created;
            }

            if (IsSettleAborted)
            {
                CancelInPlace(abort); // aborted before the source existed
            }

            return abort.Token;
        }
    }

    /// <summary>Gets whether the stop path has aborted this delivery's settlement.</summary>
    internal bool IsSettleAborted => Volatile.Read(ref _settleAborted) != 0;

    /// <summary>
    /// Gets a task that completes when the claimed settlement has ended (settled, failed, or the lease was lost), or
    /// when the message is finished. Unlike <see cref="Finished"/> it does not wait for the handler.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the pump. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    internal Task SettleEnded => LazyTaskAsync(ref _settleEnded, ref _isSettleEnded);

    /// <summary>Gets whether a settlement has been claimed or the lease was lost.</summary>
    internal bool IsClaimed => Volatile.Read(ref _claimed) != 0;

    /// <summary>Claims the one settlement of this delivery; only the first caller wins.</summary>
    internal bool TryClaim() => Interlocked.Exchange(ref _claimed, 1) == 0;

    /// <summary>Marks the lease lost; returns true for the first caller only.</summary>
    internal bool TryMarkLost() => Lease.TryMarkLost();

    internal void CancelHandler()
    {
        try
        {
            _handlerCancellation.Cancel();
        }
        catch (AggregateException)
        {
            // Callbacks registered by the handler threw; the handler sees the cancellation anyway.
        }
    }

    /// <summary>Marks the claimed settlement ended.</summary>
    internal void EndSettlement() => CompleteLazy(ref _settleEnded, ref _isSettleEnded);

    /// <summary>Ends a settlement that outlived its lock: the settle call and its retries stop waiting.</summary>
    internal void AbortSettlement()
    {
        Interlocked.Exchange(ref _settleAborted, 1);
        if (Volatile.Read(ref _settleAbort) is { } abort)
        {
            CancelInPlace(abort);
        }

        Volatile.Read(ref _settleAbortListener)?.OnSettleAbort(SettleAbortToken);
    }

    /// <summary>
    /// Sets (or, with <see langword="null"/>, clears) the one listener told when the settlement is aborted; a listener
    /// set after the abort is told at once.
    /// </summary>
    internal void ListenForSettleAbort(ISettleAbortListener? listener)
    {
        Interlocked.Exchange(ref _settleAbortListener, listener);
        if (listener is not null && IsSettleAborted)
        {
            listener.OnSettleAbort(SettleAbortToken);
        }
    }

    internal void Finish()
    {
        CompleteLazy(ref _settleEnded, ref _isSettleEnded);
        CompleteLazy(ref _finished, ref _isFinished);
    }

    /// <summary>
    /// The task of a completion signal whose source is created only when someone asks for it: a completed task once
    /// <paramref name="done"/> is set, otherwise the (shared) source's task, completed by <see cref="CompleteLazy"/>.
    /// Most messages finish without anyone waiting, and allocate neither.
    /// </summary>
    private static Task LazyTaskAsync(ref TaskCompletionSource? source, ref int done)
    {
        if (Volatile.Read(ref done) != 0)
        {
            return Task.CompletedTask;
        }

        var existing = Volatile.Read(ref source);
        if (existing is null)
        {
            var created = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            existing = Interlocked.CompareExchange(ref source, created, null) ?? created;
        }

        if (Volatile.Read(ref done) != 0)
        {
            existing.TrySetResult(); // completed while the source was being created
        }

        return existing.Task;
    }

    private static void CompleteLazy(ref TaskCompletionSource? source, ref int done)
    {
        Interlocked.Exchange(ref done, 1);
        Volatile.Read(ref source)?.TrySetResult();
    }

    private static void CancelInPlace(CancellationTokenSource source)
    {
        try
        {
#pragma warning disable VSTHRD103 // Cancel in the lane: CancelAsync would resume the stop path on the thread pool (see SettleAtStopAsync).
            source.Cancel();
#pragma warning restore VSTHRD103
        }
        catch (AggregateException)
        {
            // A settle call's registration threw; the call sees the cancellation anyway.
        }
    }
}
