using System.Threading.Tasks.Sources;

namespace PriorityAsync.MessagePump;

/// <summary>
/// One message waiting for its complete call: a reusable value-task source with two owners, the awaiter (until it
/// reads the outcome) and the batcher (until the completion leaves the queue or its call ends); back in the pool
/// once both let go.
/// </summary>
internal sealed class PendingCompletion : IValueTaskSource<Exception?>, ISettleAbortListener
{
    private readonly CompletionBatcher _batcher;
    private ManualResetValueTaskSourceCore<Exception?> _core;
    private PumpDelivery? _delivery;
    private SynchronizationContext? _capturedContext;
    private Action<object?>? _continuation;
    private object? _continuationState;
    private int _set;
    private int _owners;

    public PendingCompletion(CompletionBatcher batcher)
    {
        _batcher = batcher;
    }

    public PumpDelivery? Delivery => Volatile.Read(ref _delivery);

    /// <summary>Gets whether the outcome is set.</summary>
    public bool IsCompleted => Volatile.Read(ref _set) != 0;

    /// <summary>Gets or sets the number of the call carrying this completion. Read and written under the batcher's lock.</summary>
    public long CallNumber { get; set; }

    public ValueTask<Exception?> Outcome => new(this, _core.Version);

    /// <summary>Takes the completion for <paramref name="delivery"/>. Call under the batcher's lock.</summary>
    public void Rent(PumpDelivery delivery)
    {
        _core.Reset();
        Volatile.Write(ref _set, 0);
        _owners = 2;
        CallNumber = 0;
        Volatile.Write(ref _delivery, delivery);
    }

    /// <summary>Sets the outcome; only the first one counts.</summary>
    public bool TrySet(Exception? outcome)
    {
        if (Interlocked.Exchange(ref _set, 1) != 0)
        {
            return false;
        }

        _core.SetResult(outcome);
        return true;
    }

    /// <summary>The batcher lets go of it. Call under the batcher's lock.</summary>
    public void Release()
    {
        _delivery?.ListenForSettleAbort(null);
        ReleaseOwner();
    }

    public Exception? GetResult(short token)
    {
        var outcome = _core.GetResult(token);
        lock (_batcher.Gate)
        {
            ReleaseOwner();
        }

        return outcome;
    }

    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    /// <summary>
    /// Like a task's await continuation: with a captured lane, it runs inline when the outcome is set in that lane
    /// (the batcher's call answered in the lease lane) and is posted to the lane otherwise. The core alone would
    /// always post, which would put every completion's settlement behind the lease lane's queue.
    /// </summary>
    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        var context = flags.HasFlag(ValueTaskSourceOnCompletedFlags.UseSchedulingContext) ? SynchronizationContext.Current : null;
        _capturedContext = context is not null && context.GetType() != typeof(SynchronizationContext) ? context : null;
        _continuation = continuation;
        _continuationState = state;
        _core.OnCompleted(InvokeContinuation, this, token, flags & ~ValueTaskSourceOnCompletedFlags.UseSchedulingContext);
    }

    private static void InvokeContinuation(object? state)
    {
        var pending = (PendingCompletion)state!;
        var context = pending._capturedContext;
        if (context is null || ReferenceEquals(context, SynchronizationContext.Current))
        {
            RunContinuation(pending);
        }
        else
        {
#pragma warning disable VSTHRD001 // A lane's context, not a UI thread: posting is how an await continuation reaches its lane.
            context.Post(static s => RunContinuation((PendingCompletion)s!), pending);
#pragma warning restore VSTHRD001
        }
    }

    private static void RunContinuation(PendingCompletion pending)
    {
        var continuation = pending._continuation!;
        var state = pending._continuationState;
        pending._continuation = null;
        pending._continuationState = null;
        pending._capturedContext = null;
        continuation(state); // reads the outcome: the pending may be reused from here on
    }

    public void OnSettleAbort(CancellationToken token)
    {
        // The delivery may have told this listener just as the completion was reused for another message: only the
        // abort of the message it carries now counts.
        if (Delivery is not { IsSettleAborted: true } delivery || token != delivery.SettleAbortToken)
        {
            return;
        }

        long callNumber;
        lock (_batcher.Gate)
        {
            callNumber = CallNumber;
        }

        if (TrySet(new OperationCanceledException("The settlement was aborted: the lock expired with renewals stopped.", token)))
        {
            _batcher.OnMemberAborted(callNumber);
        }
    }

    /// <summary>One owner lets go; the last one returns it to the pool. Call under the batcher's lock.</summary>
    private void ReleaseOwner()
    {
        if (--_owners == 0)
        {
            Volatile.Write(ref _delivery, null);
            _batcher.Return(this);
        }
    }
}
