namespace PriorityAsync.Messaging;

public sealed partial class MessageContext
{
    private readonly CancellationTokenSource _handlerCancellation = new();
    private readonly CancellationTokenSource _leaseCancellation = new();
    private readonly TaskCompletionSource _finished = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _claimed;
    private int _leaseLost;
    private int _renewals;

    /// <summary>Gets a token canceled when the message is finished: the lease keeper stops.</summary>
    internal CancellationToken LeaseToken => _leaseCancellation.Token;

    /// <summary>Gets a task that completes when the handler has returned and the message is settled.</summary>
    internal Task Finished => _finished.Task;

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

    internal void Finish()
    {
        _leaseCancellation.Cancel();
        _finished.TrySetResult();
    }
}
