using System.Collections.ObjectModel;
using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

/// <summary>
/// One queue of an <see cref="InMemoryLeaseBroker"/>: a real lease broker in memory. A receive locks the oldest
/// visible message with a fresh lock token; only the holder of an unexpired lock may renew or settle it; an expired or
/// abandoned lock makes the message visible again, with its delivery count one higher on the next delivery, until
/// the last allowed delivery, after which it is dead-lettered. Thread-safe; expiry is judged on the broker's clock.
/// </summary>
[SuppressMessage("Naming", "CA1711:Identifiers should not have incorrect suffix", Justification = "Public API name: it is a queue (a lease broker modelled on a Service Bus queue), not a Queue<T> collection; renaming would break callers.")]
public sealed partial class InMemoryQueue : IMessageSource
{
    /// <summary>The dead-letter reason of a message whose last allowed delivery ended unsettled.</summary>
    public const string MaxDeliveryCountExceededReason = "MaxDeliveryCountExceeded";

    /// <summary>The queue's <see cref="IMessageSource.MessagingSystem"/> (OpenTelemetry <c>messaging.system</c>).</summary>
    public const string MessagingSystemName = "priorityasync.inmemory";

    private readonly Lock _gate = new();
    private readonly Queue<Entry> _available = new();
    private readonly Dictionary<Guid, Entry> _locked = [];
    private readonly List<DeadLetteredMessage> _deadLetters = [];
    private readonly InMemoryQueueOptions _options;
    private readonly Random _faults;
    private long _nextId;
    private long _sent;
    private long _received;
    private long _redelivered;
    private long _completed;
    private long _abandoned;
    private long _maxDeliveryDeadLettered;
    private long _leasesLost;
    private long _leaseLostErrors;
    private long _renewals;
    private long _renewCalls;
    private DateTimeOffset _nextExpiry = DateTimeOffset.MaxValue;
    private long _transientFaults;
    private int _awaitingRedelivery;

    internal InMemoryQueue(string name, InMemoryQueueOptions options, TimeProvider timeProvider)
    {
        options.Validate();
        Name = name;
        TimeProvider = timeProvider;
        _options = options;
        _faults = new Random(options.FaultSeed);
    }

    /// <summary>Gets the queue's name.</summary>
    public string Name { get; }

    /// <summary>Gets the clock the queue judges lock expiry on.</summary>
    public TimeProvider TimeProvider { get; }

    /// <summary>Gets how long a receive or a renewal locks a message.</summary>
    public TimeSpan LockDuration => _options.LockDuration;

    /// <summary>Gets how many deliveries a message gets before it is dead-lettered.</summary>
    public int MaxDeliveryCount => _options.MaxDeliveryCount;

    /// <inheritdoc />
    TimeSpan? IMessageSource.LockDuration => _options.LockDuration;

    /// <inheritdoc />
    bool IMessageSource.CompletesBatchesNatively => true;

    /// <inheritdoc />
    bool IMessageSource.RenewsBatchesNatively => true;

    /// <inheritdoc />
    /// <remarks><see cref="MessagingSystemName"/>.</remarks>
    string IMessageSource.MessagingSystem => MessagingSystemName;

    /// <inheritdoc />
    /// <remarks>The queue's <see cref="Name"/>.</remarks>
    string? IMessageSource.DestinationName => Name;

    /// <summary>Adds a message to the back of the queue.</summary>
    /// <param name="body">The message's body.</param>
    /// <param name="messageId">The message's identifier; <see langword="null"/> for a generated one.</param>
    /// <returns>The message's identifier.</returns>
    public string Send(ReadOnlyMemory<byte> body, string? messageId = null) => Send(body, messageId, headers: null);

    /// <summary>Adds a message with headers to the back of the queue.</summary>
    /// <param name="body">The message's body.</param>
    /// <param name="messageId">The message's identifier; <see langword="null"/> for a generated one.</param>
    /// <param name="headers">
    /// The message's headers (<see cref="ILeasedMessage.Headers"/>), copied here; <see langword="null"/> for none.
    /// </param>
    /// <returns>The message's identifier.</returns>
    /// <exception cref="ArgumentException"><paramref name="headers"/> holds a null value.</exception>
    public string Send(ReadOnlyMemory<byte> body, string? messageId, IReadOnlyDictionary<string, string>? headers)
    {
        var copy = CopyHeaders(headers);
        lock (_gate)
        {
            var entry = new Entry(messageId ?? $"{Name}-{++_nextId}", body, copy);
            _available.Enqueue(entry);
            _sent++;
            return entry.MessageId;
        }
    }

    private static ReadOnlyDictionary<string, string> CopyHeaders(IReadOnlyDictionary<string, string>? headers)
    {
        if (headers is null || headers.Count == 0)
        {
            return ReadOnlyDictionary<string, string>.Empty;
        }

        var copy = new Dictionary<string, string>(headers.Count, StringComparer.Ordinal);
        foreach (var (name, value) in headers)
        {
            copy[name] = value ?? throw new ArgumentException($"Header '{name}' has a null value.", nameof(headers));
        }

        return copy.AsReadOnly();
    }

    /// <inheritdoc />
    public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
        AfterLatencyAsync(static q => (ILeasedMessage?)q.Receive(), this, cancellationToken);

    /// <summary>Receives up to <paramref name="maxMessages"/> messages in one call: one latency for the whole batch.</summary>
    /// <param name="maxMessages">The most messages to return; at least 1.</param>
    /// <param name="cancellationToken">Cancels the receive.</param>
    /// <returns>The locked messages, oldest first; none when the queue has no visible message.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxMessages"/> is zero or negative.</exception>
    public Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessages);
        return AfterLatencyAsync(static a => (IReadOnlyList<ILeasedMessage>)a.Queue.ReceiveMany(a.MaxMessages), (Queue: this, MaxMessages: maxMessages), cancellationToken);
    }

    private InMemoryMessage? Receive()
    {
        lock (_gate)
        {
            var now = TimeProvider.GetUtcNow();
            ExpireLocksLocked(now);
            return ReceiveLocked(now);
        }
    }

    private List<ILeasedMessage> ReceiveMany(int maxMessages)
    {
        lock (_gate)
        {
            var now = TimeProvider.GetUtcNow();
            ExpireLocksLocked(now);
            var batch = new List<ILeasedMessage>(Math.Min(maxMessages, _available.Count));
            while (batch.Count < maxMessages && ReceiveLocked(now) is { } message)
            {
                batch.Add(message);
            }

            return batch;
        }
    }

    /// <summary>Locks the next visible message, or returns <see langword="null"/> when none is visible. Call after expiring locks.</summary>
    private InMemoryMessage? ReceiveLocked(DateTimeOffset now)
    {
        if (!_available.TryDequeue(out var entry))
        {
            return null;
        }

        if (entry.DeliveryCount > 0)
        {
            _redelivered++;
            _awaitingRedelivery--;
        }

        entry.DeliveryCount++;
        entry.LockToken = Guid.NewGuid();
        entry.LockedUntil = now + _options.LockDuration;
        _locked.Add(entry.LockToken, entry);
        if (entry.LockedUntil < _nextExpiry)
        {
            _nextExpiry = entry.LockedUntil;
        }

        _received++;
        return new InMemoryMessage(this, entry, entry.LockToken, entry.DeliveryCount, entry.LockedUntil);
    }

    /// <summary>Takes a consistent snapshot of the queue's accounting, after processing expired locks.</summary>
    /// <returns>The snapshot.</returns>
    public InMemoryQueueStatistics GetStatistics()
    {
        lock (_gate)
        {
            ExpireLocksLocked(TimeProvider.GetUtcNow());
            return new InMemoryQueueStatistics
            {
                Sent = _sent,
                Received = _received,
                Redelivered = _redelivered,
                Completed = _completed,
                Abandoned = _abandoned,
                DeadLettered = _deadLetters.Count,
                MaxDeliveryDeadLettered = _maxDeliveryDeadLettered,
                LeasesLost = _leasesLost,
                LeaseLostErrors = _leaseLostErrors,
                Renewals = _renewals,
                RenewCalls = _renewCalls,
                TransientFaults = _transientFaults,
                InFlight = _locked.Count,
                Available = _available.Count,
                AwaitingRedelivery = _awaitingRedelivery,
            };
        }
    }

    /// <summary>Returns the messages in the dead-letter queue, oldest first.</summary>
    /// <returns>A copy of the dead-letter queue.</returns>
    public IReadOnlyList<DeadLetteredMessage> GetDeadLetters()
    {
        lock (_gate)
        {
            return [.. _deadLetters];
        }
    }

    /// <inheritdoc />
    public override string ToString() => $"InMemoryQueue '{Name}'";

    /// <summary>
    /// Runs <paramref name="operation"/> after the configured latency, inside the callback of a timer of the broker's
    /// clock, and completes the returned task there: the caller's await resumes on its own context, and nothing hops to
    /// the thread pool (which would let a virtual clock run ahead of the work).
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "Returns the task of the queue's own LatentOperation, completed only by that operation's timer callback or cancellation. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    private Task<TResult> AfterLatencyAsync<TState, TResult>(Func<TState, TResult> operation, TState state, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled<TResult>(cancellationToken);
        }

        if (_options.Latency <= TimeSpan.Zero)
        {
            try
            {
                return Task.FromResult(operation(state));
            }
            catch (Exception ex)
            {
                return Task.FromException<TResult>(ex);
            }
        }

        return new LatentOperation<TState, TResult>(operation, state, TimeProvider, _options.Latency, cancellationToken).Task;
    }

    /// <summary>Releases every lock that has expired at <paramref name="now"/>.</summary>
    /// <remarks>
    /// Looks at the locks only when <paramref name="now"/> has reached the earliest expiry seen (a renewal only moves a
    /// lock later, so that bound stays safe): a renewal of one lease among thousands locked costs no scan of them all.
    /// </remarks>
    private void ExpireLocksLocked(DateTimeOffset now)
    {
        if (now < _nextExpiry)
        {
            return;
        }

        List<Entry>? expired = null;
        var next = DateTimeOffset.MaxValue;
        foreach (var entry in _locked.Values)
        {
            if (now >= entry.LockedUntil)
            {
                (expired ??= []).Add(entry);
            }
            else if (entry.LockedUntil < next)
            {
                next = entry.LockedUntil;
            }
        }

        _nextExpiry = next;

        if (expired is null)
        {
            return;
        }

        // Release in lock order so that redelivery order does not depend on dictionary order.
        expired.Sort(static (a, b) => a.LockedUntil.CompareTo(b.LockedUntil));
        foreach (var entry in expired)
        {
            _leasesLost++;
            ReleaseLocked(entry);
        }
    }

    /// <summary>Ends the current delivery unsettled: the message is visible again, or dead-lettered after its last delivery.</summary>
    private void ReleaseLocked(Entry entry)
    {
        _locked.Remove(entry.LockToken);
        entry.LockToken = Guid.Empty;
        if (entry.DeliveryCount >= _options.MaxDeliveryCount)
        {
            _maxDeliveryDeadLettered++;
            _deadLetters.Add(new DeadLetteredMessage(entry.MessageId, MaxDeliveryCountExceededReason, entry.DeliveryCount));
            return;
        }

        _available.Enqueue(entry);
        _awaitingRedelivery++;
    }
}
