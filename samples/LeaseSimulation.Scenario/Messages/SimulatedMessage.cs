namespace LeaseSimulation.Messages;

/// <summary>One message of the scenario: when it was received and last renewed, and how it ended. Thread-safe.</summary>
public sealed class SimulatedMessage
{
    private readonly CancellationTokenSource _finished = new();
    private long _lastRenewedTicks;
    private int _status;

    /// <summary>Creates a message.</summary>
    /// <param name="id">The message's number, from 1.</param>
    public SimulatedMessage(int id)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(id, 1);
        Id = id;
    }

    /// <summary>Gets the message's number.</summary>
    public int Id { get; }

    /// <summary>Gets the scenario time at which it was received.</summary>
    public TimeSpan ReceivedAt { get; private set; }

    /// <summary>Gets the scenario time at which it was done or lost, or <see langword="null"/> while in flight.</summary>
    public TimeSpan? FinishedAt { get; private set; }

    /// <summary>Gets the scenario time of the last renewal (the receive counts as the first).</summary>
    public TimeSpan LastRenewedAt => TimeSpan.FromTicks(Volatile.Read(ref _lastRenewedTicks));

    /// <summary>Gets the message's status.</summary>
    public MessageStatus Status => (MessageStatus)Volatile.Read(ref _status);

    /// <summary>Gets whether the message is done or lost.</summary>
    public bool IsFinished => Status != MessageStatus.InFlight;

    /// <summary>Gets a token cancelled when the message is done or lost, which stops its lease keeper's wait.</summary>
    public CancellationToken Finished => _finished.Token;

    /// <summary>Records the receive: the lease starts now.</summary>
    /// <param name="now">The scenario time.</param>
    public void MarkReceived(TimeSpan now)
    {
        ReceivedAt = now;
        Volatile.Write(ref _lastRenewedTicks, now.Ticks);
    }

    /// <summary>Records a renewal of the lease at <paramref name="now"/>.</summary>
    /// <param name="now">The scenario time.</param>
    public void Renew(TimeSpan now) => Volatile.Write(ref _lastRenewedTicks, now.Ticks);

    /// <summary>Ends the message with <paramref name="status"/>, unless it has already ended.</summary>
    /// <param name="status">Done or lost.</param>
    /// <param name="now">The scenario time.</param>
    /// <returns><see langword="true"/> when this call ended the message.</returns>
    public bool TryFinish(MessageStatus status, TimeSpan now)
    {
        if (status == MessageStatus.InFlight)
        {
            throw new ArgumentOutOfRangeException(nameof(status), status, "A message finishes as Done or Lost.");
        }

        if (Interlocked.CompareExchange(ref _status, (int)status, (int)MessageStatus.InFlight) != (int)MessageStatus.InFlight)
        {
            return false;
        }

        FinishedAt = now;
        _finished.Cancel();
        return true;
    }
}
