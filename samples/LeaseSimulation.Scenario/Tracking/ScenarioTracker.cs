using LeaseSimulation.Messages;
using LeaseSimulation.Settings;
using LeaseSimulation.Timing;

namespace LeaseSimulation.Tracking;

/// <summary>
/// Counts what happens in one run: receives, renewals (with their lateness), completions and losses, and the
/// monitor's timeline. Thread-safe.
/// </summary>
public sealed class ScenarioTracker
{
    private readonly object _gate = new();
    private readonly ScenarioClock _clock;
    private readonly TimeSpan _renewInterval;
    private readonly TimeSpan _leaseDuration;
    private readonly List<TimelineSample> _timeline = [];
    private readonly List<SimulatedMessage> _received = [];
    private int _receivedCount;
    private int _abandoned;
    private int _done;
    private int _lost;
    private TimeSpan _maxLateness;
    private TimeSpan _lastFinish;
    private TimeSpan _doneDurationSum;

    /// <summary>Creates a tracker for a run.</summary>
    /// <param name="settings">The run's settings (renew interval and lease duration).</param>
    /// <param name="clock">The run's clock.</param>
    public ScenarioTracker(SimulationSettings settings, ScenarioClock clock)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(clock);
        _clock = clock;
        _renewInterval = settings.RenewInterval;
        _leaseDuration = settings.LeaseDuration;
    }

    /// <summary>Raised after each monitor sample, on the thread that took it. Keep handlers short.</summary>
    public event Action<TimelineSample>? Sampled;

    /// <summary>Gets the run's clock.</summary>
    public ScenarioClock Clock => _clock;

    /// <summary>Gets the monitor's samples so far.</summary>
    public IReadOnlyList<TimelineSample> Timeline
    {
        get
        {
            lock (_gate)
            {
                return [.. _timeline];
            }
        }
    }

    /// <summary>Gets the counters now.</summary>
    /// <returns>A sample at the current scenario time.</returns>
    public TimelineSample Snapshot()
    {
        lock (_gate)
        {
            return SnapshotLocked(_clock.Now);
        }
    }

    /// <summary>Gets the largest lateness of a renewal: time since the previous renewal minus the renew interval.</summary>
    public TimeSpan MaxLeaseLateness
    {
        get
        {
            lock (_gate)
            {
                return _maxLateness;
            }
        }
    }

    /// <summary>Gets the scenario time at which the last message finished.</summary>
    public TimeSpan LastFinish
    {
        get
        {
            lock (_gate)
            {
                return _lastFinish;
            }
        }
    }

    /// <summary>Gets the mean time from receive to completion of the completed messages (zero when none).</summary>
    public TimeSpan MeanDoneDuration
    {
        get
        {
            lock (_gate)
            {
                return _done == 0 ? TimeSpan.Zero : _doneDurationSum / _done;
            }
        }
    }

    /// <summary>Gets how many messages were still in flight when the run was stopped at its deadline (counted as lost).</summary>
    public int Abandoned
    {
        get
        {
            lock (_gate)
            {
                return _abandoned;
            }
        }
    }

    /// <summary>Ends every message in flight as lost: the run has reached its deadline.</summary>
    public void AbandonInFlight()
    {
        SimulatedMessage[] inFlight;
        lock (_gate)
        {
            inFlight = [.. _received.Where(m => !m.IsFinished)];
        }

        var now = _clock.Now;
        foreach (var message in inFlight)
        {
            if (Finish(message, MessageStatus.Lost, now))
            {
                lock (_gate)
                {
                    _abandoned++;
                }
            }
        }
    }

    /// <summary>Records a receive: the message's lease starts now.</summary>
    /// <param name="message">The received message.</param>
    public void OnReceived(SimulatedMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        message.MarkReceived(_clock.Now);
        lock (_gate)
        {
            _receivedCount++;
            _received.Add(message);
        }
    }

    /// <summary>
    /// Renews the lease of <paramref name="message"/> now, or finds it lost when more than the lease duration has
    /// passed since the last renewal.
    /// </summary>
    /// <param name="message">The message.</param>
    /// <returns><see langword="true"/> when renewed and the keeper should go on.</returns>
    public bool Renew(SimulatedMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        if (message.IsFinished)
        {
            return false;
        }

        var now = _clock.Now;
        var sinceLast = now - message.LastRenewedAt;
        lock (_gate)
        {
            if (sinceLast - _renewInterval > _maxLateness)
            {
                _maxLateness = sinceLast - _renewInterval;
            }
        }

        if (sinceLast > _leaseDuration)
        {
            Finish(message, MessageStatus.Lost, now);
            return false;
        }

        message.Renew(now);
        return true;
    }

    /// <summary>
    /// Records a renewal that a broker has judged (used by the pump strategy): measures its lateness, and renews the
    /// message when <paramref name="renewed"/> or ends it as lost when not.
    /// </summary>
    /// <param name="message">The message.</param>
    /// <param name="renewed">Whether the broker accepted the renewal.</param>
    public void RecordBrokerRenewal(SimulatedMessage message, bool renewed)
    {
        ArgumentNullException.ThrowIfNull(message);
        if (message.IsFinished)
        {
            return;
        }

        var now = _clock.Now;
        var lateness = now - message.LastRenewedAt - _renewInterval;
        lock (_gate)
        {
            if (lateness > _maxLateness)
            {
                _maxLateness = lateness;
            }
        }

        if (renewed)
        {
            message.Renew(now);
        }
        else
        {
            Finish(message, MessageStatus.Lost, now);
        }
    }

    /// <summary>Ends <paramref name="message"/> with the outcome a broker reported (used by the pump strategy).</summary>
    /// <param name="message">The message.</param>
    /// <param name="status">Done or lost.</param>
    public void RecordBrokerOutcome(SimulatedMessage message, MessageStatus status)
    {
        ArgumentNullException.ThrowIfNull(message);
        Finish(message, status, _clock.Now);
    }

    /// <summary>Completes <paramref name="message"/>; a completion more than the lease duration after the last renewal finds it lost.</summary>
    /// <param name="message">The processed message.</param>
    public void Complete(SimulatedMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        var now = _clock.Now;
        Finish(message, now - message.LastRenewedAt > _leaseDuration ? MessageStatus.Lost : MessageStatus.Done, now);
    }

    /// <summary>Takes a monitor sample at <paramref name="now"/>.</summary>
    /// <param name="now">The scenario time.</param>
    public void Sample(TimeSpan now)
    {
        TimelineSample sample;
        lock (_gate)
        {
            sample = SnapshotLocked(now);
            _timeline.Add(sample);
        }

        Sampled?.Invoke(sample);
    }

    private bool Finish(SimulatedMessage message, MessageStatus status, TimeSpan now)
    {
        if (!message.TryFinish(status, now))
        {
            return false;
        }

        lock (_gate)
        {
            if (status == MessageStatus.Done)
            {
                _done++;
                _doneDurationSum += now - message.ReceivedAt;
            }
            else
            {
                _lost++;
            }

            if (now > _lastFinish)
            {
                _lastFinish = now;
            }
        }

        return true;
    }

    private TimelineSample SnapshotLocked(TimeSpan now) =>
        new(now.TotalSeconds, _receivedCount, _receivedCount - _done - _lost, _done, _lost);
}
