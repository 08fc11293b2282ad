using System.Diagnostics;
using System.Globalization;
using LeaseSimulation.Messages;
using LeaseSimulation.Running;

namespace LeaseSimulation.Brokers.ServiceBus;

/// <summary>
/// What happened to the run's messages on Service Bus, delivery by delivery: deliveries, handler runs (a duplicate is
/// a handler run of a message beyond its first), completions, lost locks and dead letters. Reports each message's
/// first delivery, completion and dead letter to the run's tracker. Thread-safe.
/// </summary>
public sealed class ServiceBusLedger
{
    private readonly ScenarioRun _run;
    private readonly int _maxDeliveryCount;
    private readonly Lock _gate = new();
    private readonly Dictionary<int, SimulatedMessage> _messages = [];
    private readonly Dictionary<(int Id, int Delivery), DeliveryOutcome?> _deliveries = [];
    private readonly HashSet<int> _handled = [];
    private readonly HashSet<int> _completed = [];
    private readonly HashSet<int> _deadLettered = [];
    private readonly Dictionary<(int Id, int Delivery), long> _deliveredAt = [];
    private long _lockHeldTicks;
    private int _handlerRuns;
    private int _leasesLost;
    private int _abandoned;

    /// <summary>Creates the ledger of <paramref name="run"/>.</summary>
    /// <param name="run">The run; its messages are "1" to "N".</param>
    /// <param name="maxDeliveryCount">The queue's max delivery count: a lock lost at that delivery dead-letters the message.</param>
    public ServiceBusLedger(ScenarioRun run, int maxDeliveryCount)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxDeliveryCount, 1);
        _run = run;
        _maxDeliveryCount = maxDeliveryCount;
    }

    /// <summary>Gets how many deliveries the consumer received.</summary>
    public int Deliveries
    {
        get
        {
            lock (_gate)
            {
                return _deliveries.Count;
            }
        }
    }

    /// <summary>Gets how many times a handler ran (started processing a delivery).</summary>
    public int HandlerRuns => Volatile.Read(ref _handlerRuns);

    /// <summary>Gets what the in-process test broker held at the end of the run, or <see langword="null"/> (before the end, or with <c>--connection</c>).</summary>
    public ServiceBusBrokerAudit? BrokerAudit { get; internal set; }

    /// <summary>Gets how many handler runs were of a message already handled once: the work done twice.</summary>
    public int Duplicates
    {
        get
        {
            lock (_gate)
            {
                return _handlerRuns - _handled.Count;
            }
        }
    }

    /// <summary>Gets how many deliveries ended with their lock lost.</summary>
    public int LeasesLost => Volatile.Read(ref _leasesLost);

    /// <summary>Gets how many deliveries the consumer gave back at the run's deadline.</summary>
    public int Abandoned => Volatile.Read(ref _abandoned);

    /// <summary>Gets how many messages were completed.</summary>
    public int Completed
    {
        get
        {
            lock (_gate)
            {
                return _completed.Count;
            }
        }
    }

    /// <summary>
    /// Gets how long the consumer held locks, summed over the deliveries that ended (wall time from each delivery to the
    /// first report of its end, or to the redelivery that showed its lock was lost): what renewals per lock duration are
    /// counted against.
    /// </summary>
    public TimeSpan LockHeldTime
    {
        get
        {
            lock (_gate)
            {
                return TimeSpan.FromTicks(_lockHeldTicks);
            }
        }
    }

    /// <summary>
    /// Gets the renew calls the broker answered per lock duration of lock held (<see cref="LockHeldTime"/> over the
    /// run's lock duration): 2 is a renewal every half lock. <see langword="null"/> before the end of a run on the test
    /// broker (<see cref="BrokerAudit"/>) or when no lock was held.
    /// </summary>
    public double? RenewCallsPerLockDuration
    {
        get
        {
            var held = LockHeldTime;
            var lockDuration = _run.Settings.LeaseDuration * _run.Settings.TimeScale;
            return BrokerAudit is { } audit && held > TimeSpan.Zero && lockDuration > TimeSpan.Zero
                ? audit.RenewCalls / (held / lockDuration)
                : null;
        }
    }

    /// <summary>Gets how many messages were dead-lettered (lost their lock at their last delivery).</summary>
    public int DeadLettered
    {
        get
        {
            lock (_gate)
            {
                return _deadLettered.Count;
            }
        }
    }

    /// <summary>Gets whether every message of the run has been completed or dead-lettered.</summary>
    public bool AllSettled
    {
        get
        {
            lock (_gate)
            {
                return _completed.Count + _deadLettered.Count >= _run.Settings.Messages;
            }
        }
    }

    /// <summary>Gets the number of a message id of the run ("1" to "N").</summary>
    /// <param name="messageId">The message id.</param>
    /// <returns>The number.</returns>
    /// <exception cref="ArgumentException">The id is not one of the run's.</exception>
    public int NumberOf(string messageId)
    {
        ArgumentNullException.ThrowIfNull(messageId);
        return int.TryParse(messageId, NumberStyles.None, CultureInfo.InvariantCulture, out var id) && id >= 1 && id <= _run.Settings.Messages
            ? id
            : throw new ArgumentException($"Message id '{messageId}' is not one of the run's (1 to {_run.Settings.Messages}).", nameof(messageId));
    }

    /// <summary>Records a delivery; the first delivery of a message starts its lease in the tracker.</summary>
    /// <param name="messageId">The message id.</param>
    /// <param name="deliveryCount">The broker's delivery count (1 for the first delivery).</param>
    /// <returns>The scenario's record of the message.</returns>
    public SimulatedMessage OnDelivered(string messageId, int deliveryCount)
    {
        var id = NumberOf(messageId);
        SimulatedMessage message;
        bool first;
        lock (_gate)
        {
            first = !_messages.TryGetValue(id, out message!);
            if (first)
            {
                message = new SimulatedMessage(id);
                _messages.Add(id, message);
            }

            // A redelivery means every earlier delivery of the message lost its lock, whether or not its consumer noticed.
            foreach (var key in _deliveries.Where(d => d.Key.Id == id && d.Key.Delivery < deliveryCount && d.Value is null).Select(d => d.Key).ToList())
            {
                _deliveries[key] = DeliveryOutcome.LockLost;
                _leasesLost++;
                EndHeldLocked(key);
            }

            if (_deliveries.TryAdd((id, deliveryCount), null))
            {
                _deliveredAt[(id, deliveryCount)] = Stopwatch.GetTimestamp();
            }
        }

        if (first)
        {
            _run.Queue.TryTake(out _); // keeps the run's queue (what the monitor shows as waiting) in step
            _run.Tracker.OnReceived(message);
        }

        return message;
    }

    /// <summary>Records that a handler starts processing a delivery of <paramref name="messageId"/>.</summary>
    /// <param name="messageId">The message id.</param>
    public void OnHandlerStarted(string messageId)
    {
        var id = NumberOf(messageId);
        lock (_gate)
        {
            _handlerRuns++;
            _handled.Add(id);
        }
    }

    /// <summary>
    /// Records how a delivery ended; only the first report of a delivery counts, except that a completion (the broker
    /// accepted it, so the lock was held) replaces an earlier verdict.
    /// </summary>
    /// <param name="messageId">The message id.</param>
    /// <param name="deliveryCount">The broker's delivery count of the delivery.</param>
    /// <param name="outcome">How it ended.</param>
    public void OnSettled(string messageId, int deliveryCount, DeliveryOutcome outcome)
    {
        var id = NumberOf(messageId);
        SimulatedMessage? message;
        lock (_gate)
        {
            if (_deliveries.TryGetValue((id, deliveryCount), out var known) && known is not null)
            {
                if (outcome != DeliveryOutcome.Completed || known == DeliveryOutcome.Completed)
                {
                    return;
                }

                // The broker accepted the completion, so the lock was held: an earlier lock-lost verdict on this delivery
                // came from a renewal that raced the completion.
                if (known == DeliveryOutcome.LockLost)
                {
                    _leasesLost--;
                }
                else
                {
                    _abandoned--;
                }
            }

            _deliveries[(id, deliveryCount)] = outcome;
            EndHeldLocked((id, deliveryCount));
            _messages.TryGetValue(id, out message);
            switch (outcome)
            {
                case DeliveryOutcome.Completed:
                    _completed.Add(id);
                    _deadLettered.Remove(id);
                    break;
                case DeliveryOutcome.LockLost:
                    _leasesLost++;
                    break;
                default:
                    _abandoned++;
                    break;
            }

            if (outcome != DeliveryOutcome.Completed && deliveryCount >= _maxDeliveryCount && !_completed.Contains(id))
            {
                _deadLettered.Add(id);
            }
        }

        if (message is not null && (outcome == DeliveryOutcome.Completed || deliveryCount >= _maxDeliveryCount))
        {
            _run.Tracker.RecordBrokerOutcome(message, outcome == DeliveryOutcome.Completed ? MessageStatus.Done : MessageStatus.Lost);
        }
    }

    /// <summary>Adds the time a delivery's lock was held, once, when its end is first known. Call under the lock.</summary>
    private void EndHeldLocked((int Id, int Delivery) delivery)
    {
        if (_deliveredAt.Remove(delivery, out var deliveredAt))
        {
            _lockHeldTicks += Stopwatch.GetElapsedTime(deliveredAt).Ticks;
        }
    }

    /// <summary>Records a renewal the broker accepted (measures its lateness in the tracker).</summary>
    /// <param name="messageId">The message id.</param>
    public void OnRenewed(string messageId)
    {
        var id = NumberOf(messageId);
        SimulatedMessage? message;
        lock (_gate)
        {
            _messages.TryGetValue(id, out message);
        }

        if (message is not null)
        {
            _run.Tracker.RecordBrokerRenewal(message, renewed: true);
        }
    }
}
