using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.KeeperLateness;

/// <summary>
/// What the keeper did, seen where the broker answers (<see cref="TimedSource"/>): when each message's receive
/// returned, when its first renewal was answered, the slack of every renewal (the lease's expiry before the renewal
/// minus the time the renewal was answered) and the renew calls sent. Thread-safe.
/// </summary>
internal sealed class LatenessLog(TimeProvider clock)
{
    private readonly Lock _gate = new();
    private readonly Dictionary<ILeasedMessage, DateTimeOffset> _received = new(ReferenceEqualityComparer.Instance);
    private readonly List<double> _firstRenewalMs = [];
    private readonly List<double> _slackMs = [];
    private readonly List<double> _sentSlackMs = [];
    private long _calls;

    /// <summary>Gets the renew calls sent (a single renewal and a batch renewal are one call each).</summary>
    public long Calls => Interlocked.Read(ref _calls);

    /// <summary>Records that the receive of <paramref name="message"/> returned now.</summary>
    public void Received(ILeasedMessage message)
    {
        var now = clock.GetUtcNow();
        lock (_gate)
        {
            _received[message] = now;
        }
    }

    /// <summary>Counts one renew call.</summary>
    public void CallSent() => Interlocked.Increment(ref _calls);

    /// <summary>Gets the time now, to pass as a renewal's send time to <see cref="Renewed"/>.</summary>
    public DateTimeOffset Now => clock.GetUtcNow();

    /// <summary>
    /// Records a renewal of <paramref name="message"/> sent at <paramref name="sent"/> and answered now, whose lease
    /// expired at <paramref name="expiry"/> before it.
    /// </summary>
    public void Renewed(ILeasedMessage message, DateTimeOffset expiry, DateTimeOffset sent)
    {
        var now = clock.GetUtcNow();
        lock (_gate)
        {
            _slackMs.Add((expiry - now).TotalMilliseconds);
            _sentSlackMs.Add((expiry - sent).TotalMilliseconds);
            if (_received.Remove(message, out var received))
            {
                _firstRenewalMs.Add((now - received).TotalMilliseconds);
            }
        }
    }

    /// <summary>Gets the time from each message's answer to its first renewal, in milliseconds.</summary>
    public Distribution FirstRenewal()
    {
        lock (_gate)
        {
            return new Distribution([.. _firstRenewalMs]);
        }
    }

    /// <summary>Gets the slack of every renewal when it was answered, in milliseconds.</summary>
    public Distribution Slack()
    {
        lock (_gate)
        {
            return new Distribution([.. _slackMs]);
        }
    }

    /// <summary>Gets the slack of every renewal when it was sent (the keeper's own part), in milliseconds.</summary>
    public Distribution SentSlack()
    {
        lock (_gate)
        {
            return new Distribution([.. _sentSlackMs]);
        }
    }
}
