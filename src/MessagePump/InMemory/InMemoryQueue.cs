using System.Collections.ObjectModel;
using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

/// <summary>
/// One queue of an <see cref="InMemoryTransport"/>: a real lease broker in memory. A receive locks the oldest
/// visible message with a fresh lock token; only the holder of an unexpired lock may renew or settle it; an expired or
/// abandoned lock makes the message visible again, with its delivery count one higher on the next delivery, until
/// the last allowed delivery, after which it is dead-lettered. Thread-safe; expiry is judged on the broker's clock.
/// </summary>
[SuppressMessage("Naming", "CA1711:Identifiers should not have incorrect suffix", Justification = "Public API name: it is a queue (a lease broker modelled on a Service Bus queue), not a Queue<T> collection; renaming would break callers.")]
public sealed partial class InMemoryQueue : IMessageSource
{
    /// <summary>The dead-letter reason of a message whose last allowed delivery ended unsettled.</summary>
    internal const string MaxDeliveryCountExceededReason = "MaxDeliveryCountExceeded";

    /// <summary>The queue's <see cref="IMessageSource.MessagingSystem"/> (OpenTelemetry <c>messaging.system</c>).</summary>
    internal const string MessagingSystemName = "priorityasync.inmemory";

    private readonly Lock _gate = new();
    private readonly Queue<Entry> _available = new();
    private readonly Dictionary<Guid, Entry> _locked = [];
    private readonly List<InMemoryDeadLetter> _deadLetters = [];
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
    internal TimeProvider TimeProvider { get; }

    /// <summary>Gets how long a receive or a renewal locks a message.</summary>
    internal TimeSpan LockDuration => _options.LockDuration;

    /// <summary>Gets how many deliveries a message gets before it is dead-lettered.</summary>
    internal int MaxDeliveryCount => _options.MaxDeliveryCount;

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

    /// <summary>Adds a message, with headers if given, to the back of the queue.</summary>
    /// <param name="body">The message's body.</param>
    /// <param name="messageId">The message's identifier; <see langword="null"/> for a generated one.</param>
    /// <param name="headers">
    /// The message's headers (<see cref="ILeasedMessage.Headers"/>), copied here; <see langword="null"/> for none.
    /// </param>
    /// <returns>The message's identifier.</returns>
    /// <exception cref="ArgumentException"><paramref name="headers"/> holds a null value.</exception>
    public string Send(ReadOnlyMemory<byte> body, string? messageId = null, IReadOnlyDictionary<string, string>? headers = null)
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
    public IReadOnlyList<InMemoryDeadLetter> GetDeadLetters()
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
}
