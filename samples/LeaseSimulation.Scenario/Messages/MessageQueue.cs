namespace LeaseSimulation.Messages;

/// <summary>The queue the consumer receives from: it starts with every message of the run. Thread-safe.</summary>
public sealed class MessageQueue
{
    private readonly int _count;
    private int _taken;
    private volatile bool _closed;

    /// <summary>Creates a queue holding <paramref name="count"/> messages.</summary>
    /// <param name="count">The number of messages; at least 1.</param>
    public MessageQueue(int count)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        _count = count;
    }

    /// <summary>Gets whether messages are left.</summary>
    public bool HasMessages => !_closed && Volatile.Read(ref _taken) < _count;

    /// <summary>Closes the queue: no more messages can be taken.</summary>
    public void Close() => _closed = true;

    /// <summary>Takes the next message.</summary>
    /// <param name="message">The message, when one was left.</param>
    /// <returns><see langword="true"/> when a message was taken.</returns>
    public bool TryTake(out SimulatedMessage message)
    {
        var id = _closed ? int.MaxValue : Interlocked.Increment(ref _taken);
        if (id > _count)
        {
            message = null!;
            return false;
        }

        message = new SimulatedMessage(id);
        return true;
    }
}
