using System.Threading.Tasks.Sources;

namespace PriorityAsync.MessagePump;

/// <summary>
/// Completes messages in batches without delaying any: a completion that finds no complete call under way is sent at
/// once, alone; completions that arrive while a call is under way wait for its answer and then go together (up to the
/// batch limit) in the next call. A completion therefore waits at most for the call under way, while its lease keeper
/// goes on renewing its lock. Runs in the lease lane.
/// </summary>
/// <remarks>
/// <para>
/// Each waiting completion ends early when its message's settlement is aborted (the stop path gave up on it at its
/// lock's expiry); a call whose messages were all aborted is canceled.
/// </para>
/// <para>
/// A steady stream of completions allocates nothing per message here: each completion is a pooled
/// <see cref="IValueTaskSource{TResult}"/> returned to the pool once both its awaiter has read the outcome and the
/// batcher is done with it; the call's cancellation source is reused until a call is canceled; a call of one message
/// reuses its one-element array (the transport must not keep the list after it answers).
/// </para>
/// </remarks>
internal sealed class CompletionBatcher
{
    /// <summary>At most this many idle completions are kept for reuse.</summary>
    private const int MaxPooled = 1024;

    private readonly IMessageSource _source;
    private readonly int _maxBatchSize;
    private readonly Action<Exception> _onContractBroken;
    private readonly Lock _gate = new();
    private readonly List<Pending> _queued = [];
    private readonly List<Pending> _members = []; // the completions of the call under way
    private readonly Stack<Pending> _pool = new();
    private readonly ILeasedMessage[] _single = new ILeasedMessage[1];
    private CancellationTokenSource? _callCancellation; // the call under way's; replaced once canceled
    private long _callNumber; // which call is under way: an abort of an earlier call's completion cancels nothing
    private int _live; // completions of the call under way not aborted
    private bool _sending;

    public CompletionBatcher(IMessageSource source, int maxBatchSize, Action<Exception> onContractBroken)
    {
        _source = source;
        _maxBatchSize = maxBatchSize;
        _onContractBroken = onContractBroken;
    }

    /// <summary>
    /// Completes the message of <paramref name="context"/>: <see langword="null"/> when completed, otherwise the
    /// failure for this message (<see cref="LeaseLostException"/>, <see cref="OperationCanceledException"/> when its
    /// settlement was aborted, or the failure of the whole call). The value task must be awaited exactly once.
    /// </summary>
    public ValueTask<Exception?> CompleteAsync(MessageContext context)
    {
        Pending pending;
        bool lead;
        lock (_gate)
        {
            pending = _pool.TryPop(out var pooled) ? pooled : new Pending(this);
            pending.Rent(context);
            _queued.Add(pending);
            lead = !_sending;
            _sending = true;
        }

        var outcome = pending.Outcome; // before the listener: an abort may complete it at once
        context.ListenForSettleAbort(pending); // no token registration per message: the context tells us directly
        if (lead)
        {
            _ = SendAllAsync();
        }

        return outcome;
    }

    private async Task SendAllAsync()
    {
        while (TakeBatch() is { } call)
        {
            await SendAsync(call.Messages, call.Cancellation);
        }
    }

    /// <summary>Takes the next batch of completions not yet aborted; <see langword="null"/> (and stops sending) when none.</summary>
    private (ILeasedMessage[] Messages, CancellationToken Cancellation)? TakeBatch()
    {
        lock (_gate)
        {
            for (var i = _queued.Count - 1; i >= 0; i--)
            {
                if (_queued[i].IsCompleted)
                {
                    var aborted = _queued[i];
                    _queued.RemoveAt(i);
                    aborted.Release(); // aborted while queued: never sent
                }
            }

            if (_queued.Count == 0)
            {
                _sending = false;
                return null;
            }

            var count = Math.Min(_queued.Count, _maxBatchSize);
            var messages = count == 1 ? _single : new ILeasedMessage[count];
            _callNumber++;
            for (var i = 0; i < count; i++)
            {
                var pending = _queued[i];
                pending.CallNumber = _callNumber;
                messages[i] = pending.Context!.Message;
                _members.Add(pending);
            }

            _queued.RemoveRange(0, count);
            _live = count;
            _callCancellation ??= new CancellationTokenSource();
            return (messages, _callCancellation.Token);
        }
    }

    private async Task SendAsync(ILeasedMessage[] messages, CancellationToken cancellation)
    {
        try
        {
            var outcomes = await _source.CompleteBatchAsync(messages, cancellation);
            if (outcomes is null || outcomes.Count != messages.Length)
            {
                var broken = new InvalidOperationException(
                    $"{_source.GetType().Name}.CompleteBatchAsync returned {outcomes?.Count.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "null"} outcomes for {messages.Length} messages; it must return one per message, in order.");
                _onContractBroken(broken);
                SetAll(broken); // each message is completed again on its own
                return;
            }

            for (var i = 0; i < messages.Length; i++)
            {
                _members[i].TrySet(outcomes[i]);
            }
        }
        catch (Exception ex)
        {
            SetAll(ex);
        }
        finally
        {
            EndCall(messages);
        }
    }

    private void SetAll(Exception failure)
    {
        foreach (var pending in _members)
        {
            pending.TrySet(failure);
        }
    }

    /// <summary>Lets go of the call's completions, and of its one-element array's message.</summary>
    private void EndCall(ILeasedMessage[] messages)
    {
        if (ReferenceEquals(messages, _single))
        {
            _single[0] = null!;
        }

        lock (_gate)
        {
            foreach (var pending in _members)
            {
                pending.Release();
            }

            _members.Clear();
            _callNumber++; // no call under way: a late abort cancels nothing
        }
    }

    /// <summary>An abort of a completion of call <paramref name="callNumber"/>: cancels the call once all its completions were aborted.</summary>
    private void OnMemberAborted(long callNumber)
    {
        CancellationTokenSource? cancel = null;
        lock (_gate)
        {
            if (callNumber == _callNumber && _members.Count > 0 && --_live == 0)
            {
                cancel = _callCancellation; // the call under way keeps its token; the next call gets a fresh source
                _callCancellation = null;
            }
        }

        if (cancel is not null)
        {
            try
            {
#pragma warning disable VSTHRD103 // In the lane, like the settle-abort token of a single call (see MessageContext.AbortSettlement).
                cancel.Cancel();
#pragma warning restore VSTHRD103
            }
            catch (AggregateException)
            {
                // A registration of the transport threw; the call sees the cancellation anyway.
            }
        }
    }

    /// <summary>Returns an idle completion to the pool. Call under the lock.</summary>
    private void Return(Pending pending)
    {
        if (_pool.Count < MaxPooled)
        {
            _pool.Push(pending);
        }
    }

    /// <summary>
    /// One message waiting for its complete call: a reusable value-task source with two owners, the awaiter (until it
    /// reads the outcome) and the batcher (until the completion leaves the queue or its call ends); back in the pool
    /// once both let go.
    /// </summary>
    private sealed class Pending : IValueTaskSource<Exception?>, ISettleAbortListener
    {
        private readonly CompletionBatcher _batcher;
        private ManualResetValueTaskSourceCore<Exception?> _core;
        private MessageContext? _context;
        private SynchronizationContext? _capturedContext;
        private Action<object?>? _continuation;
        private object? _continuationState;
        private int _set;
        private int _owners;

        public Pending(CompletionBatcher batcher)
        {
            _batcher = batcher;
        }

        public MessageContext? Context => Volatile.Read(ref _context);

        /// <summary>Gets whether the outcome is set.</summary>
        public bool IsCompleted => Volatile.Read(ref _set) != 0;

        /// <summary>Gets or sets the number of the call carrying this completion. Read and written under the batcher's lock.</summary>
        public long CallNumber { get; set; }

        public ValueTask<Exception?> Outcome => new(this, _core.Version);

        /// <summary>Takes the completion for <paramref name="context"/>. Call under the batcher's lock.</summary>
        public void Rent(MessageContext context)
        {
            _core.Reset();
            Volatile.Write(ref _set, 0);
            _owners = 2;
            CallNumber = 0;
            Volatile.Write(ref _context, context);
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
            _context?.ListenForSettleAbort(null);
            ReleaseOwner();
        }

        public Exception? GetResult(short token)
        {
            var outcome = _core.GetResult(token);
            lock (_batcher._gate)
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
            var pending = (Pending)state!;
            var context = pending._capturedContext;
            if (context is null || ReferenceEquals(context, SynchronizationContext.Current))
            {
                RunContinuation(pending);
            }
            else
            {
#pragma warning disable VSTHRD001 // A lane's context, not a UI thread: posting is how an await continuation reaches its lane.
                context.Post(static s => RunContinuation((Pending)s!), pending);
#pragma warning restore VSTHRD001
            }
        }

        private static void RunContinuation(Pending pending)
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
            // The context may have told this listener just as the completion was reused for another message: only the
            // abort of the message it carries now counts.
            if (Context is not { IsSettleAborted: true } context || token != context.SettleAbortToken)
            {
                return;
            }

            long callNumber;
            lock (_batcher._gate)
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
                Volatile.Write(ref _context, null);
                _batcher.Return(this);
            }
        }
    }
}
