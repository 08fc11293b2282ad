using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

public sealed partial class MessageContext
{
    private readonly CancellationTokenSource _handlerCancellation = new();
    private readonly CancellationTokenSource _leaseCancellation = new();
    private readonly TaskCompletionSource _finished = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _settleAbort = new();
    private readonly TaskCompletionSource _settleEnded = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _claimed;
    private int _leaseLost;
    private int _renewals;

    /// <summary>Gets a token canceled when the message is finished: the lease keeper stops.</summary>
    internal CancellationToken LeaseToken => _leaseCancellation.Token;

    /// <summary>
    /// Gets a task that completes when the handler has returned and the message is settled, or when the stop path
    /// has settled or given up on the message (the handler may still be running then).
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the pump. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    internal Task Finished => _finished.Task;

    /// <summary>
    /// Gets a token canceled when the stop path gives up on this delivery's settlement (its lock expired with renewals
    /// stopped): the settle call and its retry pauses end at once.
    /// </summary>
    internal CancellationToken SettleAbortToken => _settleAbort.Token;

    /// <summary>
    /// Gets a task that completes when the claimed settlement has ended (settled, failed, or the lease was lost), or
    /// when the message is finished. Unlike <see cref="Finished"/> it does not wait for the handler.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the pump. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    internal Task SettleEnded => _settleEnded.Task;

    /// <summary>Gets whether a settlement has been claimed or the lease was lost.</summary>
    internal bool IsClaimed => Volatile.Read(ref _claimed) != 0;

    /// <summary>Claims the one settlement of this delivery; only the first caller wins.</summary>
    internal bool TryClaim() => Interlocked.Exchange(ref _claimed, 1) == 0;

    /// <summary>Marks the lease lost; returns true for the first caller only.</summary>
    internal bool TryMarkLost() => Interlocked.Exchange(ref _leaseLost, 1) == 0;

    internal void CountRenewal() => Interlocked.Increment(ref _renewals);

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

    /// <summary>Stops the lease keeper without finishing the message (the stop path, once the shutdown wait is over).</summary>
    internal void StopRenewing() => _leaseCancellation.Cancel();

    /// <summary>Marks the claimed settlement ended.</summary>
    internal void EndSettlement() => _settleEnded.TrySetResult();

    /// <summary>Ends a settlement that outlived its lock: the settle call and its retries stop waiting.</summary>
    internal void AbortSettlement() => _settleAbort.Cancel();

    internal void Finish()
    {
        _leaseCancellation.Cancel();
        _settleEnded.TrySetResult();
        _finished.TrySetResult();
    }
}
