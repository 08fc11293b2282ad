using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

/// <summary>
/// Completes messages in batches without delaying any: a completion that finds no complete call under way is sent at
/// once, alone; completions that arrive while a call is under way wait for its answer and then go together (up to the
/// batch limit) in the next call. A completion therefore waits at most for the call under way, while its lease keeper
/// goes on renewing its lock. Runs in the lease lane.
/// </summary>
/// <remarks>
/// Each waiting completion ends early when its message's settlement is aborted (the stop path gave up on it at its
/// lock's expiry); a call whose messages were all aborted is canceled.
/// </remarks>
internal sealed class CompletionBatcher
{
    private readonly IMessageSource _source;
    private readonly int _maxBatchSize;
    private readonly Action<Exception> _onContractBroken;
    private readonly Lock _gate = new();
    private readonly List<Pending> _queued = [];
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
    /// settlement was aborted, or the failure of the whole call).
    /// </summary>
    public Task<Exception?> CompleteAsync(MessageContext context)
    {
        var pending = new Pending(this, context);
        bool lead;
        lock (_gate)
        {
            _queued.Add(pending);
            lead = !_sending;
            _sending = true;
        }

        if (lead)
        {
            _ = SendAllAsync();
        }

        return pending.Outcome;
    }

    private async Task SendAllAsync()
    {
        while (TakeBatch() is { } batch)
        {
            await SendAsync(batch);
        }
    }

    /// <summary>Takes the next batch of completions not yet aborted; <see langword="null"/> (and stops sending) when none.</summary>
    private Call? TakeBatch()
    {
        lock (_gate)
        {
            _queued.RemoveAll(static p => p.Outcome.IsCompleted);
            if (_queued.Count == 0)
            {
                _sending = false;
                return null;
            }

            var count = Math.Min(_queued.Count, _maxBatchSize);
            var call = new Call(_queued.GetRange(0, count));
            _queued.RemoveRange(0, count);
            foreach (var pending in call.Members)
            {
                pending.Call = call;
            }

            return call;
        }
    }

    private async Task SendAsync(Call call)
    {
        var messages = new ILeasedMessage[call.Members.Count];
        for (var i = 0; i < messages.Length; i++)
        {
            messages[i] = call.Members[i].Context.Message;
        }

        try
        {
            var outcomes = await _source.CompleteBatchAsync(messages, call.Cancellation.Token);
            if (outcomes is null || outcomes.Count != messages.Length)
            {
                var broken = new InvalidOperationException(
                    $"{_source.GetType().Name}.CompleteBatchAsync returned {outcomes?.Count.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "null"} outcomes for {messages.Length} messages; it must return one per message, in order.");
                _onContractBroken(broken);
                call.SetAll(broken); // each message is completed again on its own
                return;
            }

            for (var i = 0; i < messages.Length; i++)
            {
                call.Members[i].TrySet(outcomes[i]);
            }
        }
        catch (Exception ex)
        {
            call.SetAll(ex);
        }
        finally
        {
            call.Dispose();
        }
    }

    /// <summary>One complete call and the completions it carries.</summary>
    private sealed class Call : IDisposable
    {
        private int _live;

        public Call(List<Pending> members)
        {
            Members = members;
            _live = members.Count;
        }

        public List<Pending> Members { get; }

        public CancellationTokenSource Cancellation { get; } = new();

        /// <summary>Counts an aborted completion; true once every completion the call carries was aborted. Call under the batcher's lock.</summary>
        public bool OnMemberAborted() => --_live == 0;

        public void SetAll(Exception failure)
        {
            foreach (var pending in Members)
            {
                pending.TrySet(failure);
            }
        }

        public void Dispose()
        {
            foreach (var pending in Members)
            {
                pending.Dispose();
            }

            Cancellation.Dispose();
        }
    }

    /// <summary>One message waiting for its complete call.</summary>
    private sealed class Pending : IDisposable, ISettleAbortListener
    {
        private readonly TaskCompletionSource<Exception?> _outcome = new();
        private readonly CompletionBatcher _batcher;

        public Pending(CompletionBatcher batcher, MessageContext context)
        {
            _batcher = batcher;
            Context = context;
            context.ListenForSettleAbort(this); // no token registration per message: the context tells us directly
        }

        public MessageContext Context { get; }

        [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this completion's own TaskCompletionSource, completed only by the batcher. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
        public Task<Exception?> Outcome => _outcome.Task;

        /// <summary>Gets or sets the call carrying this completion, once sent. Read and written under the batcher's lock.</summary>
        public Call? Call { get; set; }

        public void TrySet(Exception? outcome) => _outcome.TrySetResult(outcome);

        public void Dispose() => Context.ListenForSettleAbort(null);

        public void OnSettleAbort(CancellationToken token)
        {
            if (!_outcome.TrySetResult(new OperationCanceledException("The settlement was aborted: the lock expired with renewals stopped.", token)))
            {
                return;
            }

            Call? allAborted;
            lock (_batcher._gate)
            {
                allAborted = Call is { } call && call.OnMemberAborted() ? call : null;
            }

            allAborted?.Cancellation.Cancel();
        }
    }
}
