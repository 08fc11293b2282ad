using System.Threading.Tasks.Sources;

namespace PriorityAsync.MessagePump;

/// <summary>
/// Completes messages in batches without delaying any: a completion that finds no complete call under way is sent at
/// once, alone; completions that arrive while a call is under way wait for its answer and then go together (up to the
/// batch limit) in the next call. A completion therefore waits at most for the call under way (its lease is no longer
/// renewed: the settlement has begun). Runs in the lease lane.
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
    private readonly List<PendingCompletion> _queued = [];
    private readonly List<PendingCompletion> _members = []; // the completions of the call under way
    private readonly Stack<PendingCompletion> _pool = new();
    private readonly ILeasedMessage[] _single = new ILeasedMessage[1];
    private CancellationTokenSource? _callCancellation; // the call under way's; replaced once canceled
    private long _callNumber; // which call is under way: an abort of an earlier call's completion cancels nothing
    private int _live; // completions of the call under way not aborted
    private bool _sending;

    /// <summary>The lock that guards the queue, the pool and the call under way; a pooled completion takes it too.</summary>
    internal Lock Gate => _gate;

    public CompletionBatcher(IMessageSource source, int maxBatchSize, Action<Exception> onContractBroken)
    {
        _source = source;
        _maxBatchSize = maxBatchSize;
        _onContractBroken = onContractBroken;
    }

    /// <summary>
    /// Completes the message of <paramref name="delivery"/>: <see langword="null"/> when completed, otherwise the
    /// failure for this message (<see cref="LeaseLostException"/>, <see cref="OperationCanceledException"/> when its
    /// settlement was aborted, or the failure of the whole call). The value task must be awaited exactly once.
    /// </summary>
    public ValueTask<Exception?> CompleteAsync(PumpDelivery delivery)
    {
        PendingCompletion pending;
        bool lead;
        lock (_gate)
        {
            pending = _pool.TryPop(out var pooled) ? pooled : new PendingCompletion(this);
            pending.Rent(delivery);
            _queued.Add(pending);
            lead = !_sending;
            _sending = true;
        }

        var outcome = pending.Outcome; // before the listener: an abort may complete it at once
        delivery.ListenForSettleAbort(pending); // no token registration per message: the delivery tells us directly
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
                messages[i] = pending.Delivery!.Message;
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
    internal void OnMemberAborted(long callNumber)
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
#pragma warning disable VSTHRD103 // In the lane, like the settle-abort token of a single call (see PumpDelivery.AbortSettlement).
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
    internal void Return(PendingCompletion pending)
    {
        if (_pool.Count < MaxPooled)
        {
            _pool.Push(pending);
        }
    }
}
