namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// A source over an <see cref="InMemoryQueue"/> with hooks for the transport's misbehaviours: <see cref="Answer"/> may
/// replace a receive's answer (given the call's number from 0, the ask and the queue's own answer), <see cref="SettleFault"/>
/// may make a settle call throw (given <c>complete</c>, <c>abandon</c> or <c>dead-letter</c> and the delivery), and every
/// renew, complete and complete-batch call is recorded. Completes batches in one call when
/// <see cref="CompletesBatchesNatively"/> is set.
/// </summary>
internal sealed class ScriptedSource(InMemoryQueue inner) : IMessageSource
{
    private int _receives;
    private int _completeCalls;

    /// <summary>Gets or sets what a receive returns instead of the queue's answer; <see langword="null"/> passes it through.</summary>
    public Func<int, int, IReadOnlyList<ILeasedMessage>, IReadOnlyList<ILeasedMessage>>? Answer { get; set; }

    /// <summary>Gets or sets the exception a settle call throws instead of settling; <see langword="null"/> settles.</summary>
    public Func<string, ILeasedMessage, Exception?>? SettleFault { get; set; }

    /// <summary>Gets or sets the exception a renew call throws (given the message and how many renew calls the source had before); <see langword="null"/> renews.</summary>
    public Func<ILeasedMessage, int, Exception?>? RenewFault { get; set; }

    /// <summary>Gets or sets how long each settle call takes on the queue's clock before it reaches the queue.</summary>
    public TimeSpan SettleLatency { get; set; }

    /// <summary>Gets the lane each settle or complete-batch call was made from.</summary>
    public List<Lane?> SettleLanes { get; } = [];

    /// <summary>Gets when each receive call was made, and what it asked for.</summary>
    public List<(DateTimeOffset At, int Asked)> Receives { get; } = [];

    /// <summary>Gets when each renew call was made, and for which message.</summary>
    public List<(DateTimeOffset At, string MessageId)> Renewals { get; } = [];

    /// <summary>Gets the size of each complete-batch call.</summary>
    public List<int> CompleteBatches { get; } = [];

    /// <summary>Gets how many single complete calls were made.</summary>
    public int CompleteCalls => _completeCalls;

    public TimeSpan? LockDuration => inner.LockDuration;

    public bool CompletesBatchesNatively { get; init; }

    public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
        throw new NotSupportedException("the pump receives in batches");

    public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        Receives.Add((inner.TimeProvider.GetUtcNow(), maxMessages));
        var answer = (await inner.ReceiveBatchAsync(maxMessages, cancellationToken)).Select(m => (ILeasedMessage)new Message(m, this)).ToList();
        return Answer is { } replace ? replace(_receives++, maxMessages, answer) : answer;
    }

    public Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        CompleteBatches.Add(messages.Count);
        SettleLanes.Add(PriorityScheduler.CurrentLane);
        return inner.CompleteBatchAsync([.. messages.Select(m => ((Message)m).Inner)], cancellationToken);
    }

    private async Task Settle(string operation, ILeasedMessage message, Func<Task> call)
    {
        SettleLanes.Add(PriorityScheduler.CurrentLane);
        if (SettleLatency > TimeSpan.Zero)
        {
            await Task.Delay(SettleLatency, inner.TimeProvider);
        }

        if (SettleFault?.Invoke(operation, message) is { } fault)
        {
            throw fault;
        }

        await call();
    }

    private sealed class Message(ILeasedMessage inner, ScriptedSource source) : ILeasedMessage
    {
        public ILeasedMessage Inner => inner;

        public string MessageId => inner.MessageId;

        public ReadOnlyMemory<byte> Body => inner.Body;

        public int DeliveryCount => inner.DeliveryCount;

        public DateTimeOffset LockedUntil => inner.LockedUntil;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
        {
            source.Renewals.Add((source.TimeNow, inner.MessageId));
            return source.RenewFault?.Invoke(this, source.Renewals.Count - 1) is { } fault
                ? Task.FromException<DateTimeOffset>(fault)
                : inner.RenewLockAsync(cancellationToken);
        }

        public Task CompleteAsync(CancellationToken cancellationToken = default)
        {
            Interlocked.Increment(ref source._completeCalls);
            return source.Settle("complete", this, () => inner.CompleteAsync(cancellationToken));
        }

        public Task AbandonAsync(CancellationToken cancellationToken = default) =>
            source.Settle("abandon", this, () => inner.AbandonAsync(cancellationToken));

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) =>
            source.Settle("dead-letter", this, () => inner.DeadLetterAsync(reason, cancellationToken));
    }

    private DateTimeOffset TimeNow => inner.TimeProvider.GetUtcNow();
}
