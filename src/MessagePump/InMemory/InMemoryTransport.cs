using System.Collections.Concurrent;

namespace PriorityAsync.MessagePump;

/// <summary>
/// The in-memory transport, a message broker with leases embedded in the process (the default): each queue locks a
/// received message for its lock duration, lets the holder renew or settle it, and delivers it again when the lock expires. Thread-safe.
/// </summary>
/// <remarks>
/// Time comes from <see cref="TimeProvider"/> and lock expiry is judged on it, so a broker on the
/// <see cref="VirtualTimeProvider"/> of a <see cref="PriorityAsyncContext"/> runs on virtual time.
/// </remarks>
public sealed class InMemoryTransport
{
    private readonly ConcurrentDictionary<string, InMemoryQueue> _queues = new(StringComparer.Ordinal);

    /// <summary>Creates a broker on <paramref name="timeProvider"/>.</summary>
    /// <param name="timeProvider">
    /// The clock; <see langword="null"/> for <see cref="TimeProvider.System"/>. On virtual time, the
    /// <see cref="VirtualTimeProvider"/> itself — not a scheduler's <see cref="PriorityScheduler.TimeProvider"/>, whose
    /// timers run in its lanes: the broker's side of each delayed call would then wait behind the consumer's slices.
    /// </param>
    public InMemoryTransport(TimeProvider? timeProvider = null)
    {
        TimeProvider = timeProvider ?? TimeProvider.System;
    }

    /// <summary>Gets the broker's clock.</summary>
    internal TimeProvider TimeProvider { get; }

    /// <summary>Creates the queue <paramref name="name"/>.</summary>
    /// <param name="name">The queue's name, unique within the broker.</param>
    /// <param name="options">The queue's options; <see langword="null"/> for the defaults. Validated here.</param>
    /// <returns>The queue.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or taken, or an option breaks its rule.</exception>
    public InMemoryQueue CreateQueue(string name, InMemoryQueueOptions? options = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        var queue = new InMemoryQueue(name, options ?? new InMemoryQueueOptions(), TimeProvider);
        return _queues.TryAdd(name, queue)
            ? queue
            : throw new ArgumentException($"The broker already has a queue named '{name}'.", nameof(name));
    }

    /// <summary>Gets the queue <paramref name="name"/>.</summary>
    /// <param name="name">The queue's name.</param>
    /// <returns>The queue.</returns>
    /// <exception cref="ArgumentException">The broker has no queue of that name.</exception>
    public InMemoryQueue GetQueue(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        return _queues.TryGetValue(name, out var queue)
            ? queue
            : throw new ArgumentException($"The broker has no queue named '{name}'.", nameof(name));
    }
}
