using System.Diagnostics;
using System.Runtime.CompilerServices;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace PriorityAsync.MessagePump;

/// <summary>
/// Keeps the leases of messages your own code received: hand it a message (<see cref="Keep"/>) and it renews the lease
/// in the lease lane of a <see cref="PriorityScheduler"/> (the reserved worker of a <see cref="PriorityTaskScheduler"/>,
/// or a <see cref="PriorityAsyncContext"/>'s thread) until the handle is disposed, the message is settled through it or
/// the lease is lost — by the rules a <see cref="PriorityMessagePump"/> keeps its own leases with, since every pump keeps
/// them through a keeper of its own: pipelined and hedged renewals, the round-trip floor, the half-lock rule, native batch
/// renewals where the source has them (<see cref="IMessageSource.RenewsBatchesNatively"/>).
/// </summary>
/// <remarks>
/// A lost lease cancels the handle's <see cref="LeaseHandle.LeaseLostToken"/> and is reported once: the
/// <see cref="LeaseLost"/> event, log event 22 and the pump meter's lost-lease counter (tagged with the keeper's name).
/// A renewal refused after the handle was disposed or settled through it is not a loss. See <c>docs/lease-keeper.md</c>.
/// </remarks>
public sealed partial class LeaseKeeper : IAsyncDisposable
{
    /// <summary>How many recent successful renewals <see cref="LeaseKeeperStatistics.MinRecentSlack"/> looks at.</summary>
    public const int SlackWindow = 32;

    /// <summary>
    /// How many renew calls of one lease may be under way at once: the renewal, and those sent while its answer is out —
    /// a hedge when that answer is later than the round trips observed, and the next renewals due by the rule from the
    /// expiry it most likely set (see <see cref="BeginRenewalLocked"/>); four cover answers up to twice the lock late.
    /// </summary>
    internal const int MaxRenewalsInFlight = 4;

    /// <summary>When (the keeper clock's timestamp) the keeper last heard an answer to any renewal; guarded by <see cref="_gate"/>.</summary>
    private long _lastAnswerHeard;

    private static readonly TimeSpan MaxDefaultRenewalBuffer = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan MinRetryDelay = TimeSpan.FromMilliseconds(1);

    /// <summary>The most a lease is renewed ahead of its due time to share a call with leases due after it.</summary>
    private static readonly TimeSpan MaxRenewalWindow = TimeSpan.FromSeconds(1);

    /// <summary>The window is at most this fraction of the time from scheduling to the due time (an eighth).</summary>
    private const int RenewalWindowDivisor = 8;

    private readonly LeaseKeeperOptions _options;
    private readonly PumpEvents _events;
    private readonly Action<LeaseHandle, Exception?>? _onLost; // the owning pump's lost-lease path; null for a keeper of its own
    private readonly Lock _gate = new();
    private readonly LeaseSchedule _schedule = new();
    private readonly RenewRoundTrips _renewRoundTrips = new();
    private readonly CancellationTokenSource _keeperStop = new();
    private readonly Dictionary<ILeasedMessage, LeaseHandle> _kept = new(ReferenceEqualityComparer.Instance); // Keep's handles; under _gate
    private readonly ConditionalWeakTable<ILeasedMessage, object?> _settled = []; // messages settled through Keep's handles: nothing left to keep
    private readonly long[] _recentSlack = new long[SlackWindow]; // under _gate
    private readonly long[] _recentPlannedSlack = new long[SlackWindow]; // under _gate: the buffer each of _recentSlack's renewals was planned with
    private int _recentSlackCount;
    private int _recentSlackNext;
    private int _keptCount; // under _gate
    private long _renewals;
    private long _renewCalls;
    private long _leasesLost;
    private long _lostLocksHeldUntilTicks; // see LostLocksHeldUntil
    private int _slowRoundTripsReported; // 1 while renewals take more than a third of the lock (reported once)
    private long _lastLostTicks = long.MinValue;
    private TaskCompletionSource? _keeperWake;
    private long _keeperWakeAtTicks = long.MaxValue;
    private bool _keeperStopping;
    private bool _disposed;
    private Task _keeper = Task.CompletedTask;
    private Task? _stopped;

    /// <summary>Creates a keeper and starts it in <paramref name="scheduler"/>'s lease lane.</summary>
    /// <param name="scheduler">The scheduler whose lease lane renews.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <param name="logger">The logger; <see langword="null"/> for none.</param>
    /// <exception cref="ArgumentNullException"><paramref name="scheduler"/> is null.</exception>
    /// <exception cref="ArgumentException">An option breaks its rule; the exception names it.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="scheduler"/> has been disposed.</exception>
    /// <exception cref="InvalidOperationException"><paramref name="scheduler"/> has finished or is shutting down.</exception>
    public LeaseKeeper(PriorityScheduler scheduler, LeaseKeeperOptions? options = null, ILogger? logger = null)
    {
        ArgumentNullException.ThrowIfNull(scheduler);
        _options = (options ?? new LeaseKeeperOptions()).Clone();
        _options.Validate(lockDuration: null, scheduler);
        Scheduler = scheduler;
        LeaseLane = scheduler.GetLane(_options.LeaseLane);
        TimeProvider = _options.TimeProvider ?? scheduler.TimeProvider;
        _events = new PumpEvents(_options.Name, source: null, _options.MeterFactory, logger ?? NullLogger.Instance);
        scheduler.ThrowIfNotAcceptingNewWork();
        Start();
    }

    /// <summary>Creates the keeper of a pump, reporting through the pump's events; started by the pump (<see cref="Start"/>).</summary>
    internal LeaseKeeper(PriorityScheduler scheduler, LeaseKeeperOptions options, PumpEvents events, Action<LeaseHandle, Exception?> onLost)
    {
        _options = options;
        Scheduler = scheduler;
        LeaseLane = scheduler.GetLane(_options.LeaseLane);
        TimeProvider = _options.TimeProvider ?? scheduler.TimeProvider;
        _events = events;
        _onLost = onLost;
    }

    /// <summary>Raised once for each lease lost while kept (in the lease lane, after the handle's token was canceled). An exception it throws is logged and dropped.</summary>
    public event EventHandler<LeaseLostEventArgs>? LeaseLost;

    /// <summary>Gets the keeper's name.</summary>
    public string Name => _options.Name;

    /// <summary>Gets the scheduler the keeper runs on.</summary>
    public PriorityScheduler Scheduler { get; }

    /// <summary>Gets the lane the keeper renews in.</summary>
    public Lane LeaseLane { get; }

    /// <summary>Gets the keeper's clock.</summary>
    public TimeProvider TimeProvider { get; }

    /// <summary>Gets the worst renew round trip of the keeper's recent calls (<see cref="RenewRoundTrips.Worst"/>), or zero before the first.</summary>
    internal TimeSpan WorstRenewRoundTrip => _renewRoundTrips.Worst;

    /// <summary>
    /// Keeps <paramref name="message"/>'s lease until the returned handle is disposed, the message is settled through
    /// it, the lease is lost or the keeper stops.
    /// </summary>
    /// <param name="message">A message received under a lease, its lock not yet expired.</param>
    /// <param name="source">
    /// The source it came from, for native batch renewals and its <see cref="IMessageSource.LockDuration"/> (pipelined
    /// renewals); <see langword="null"/> renews the message alone through <see cref="ILeasedMessage.RenewLockAsync"/>.
    /// </param>
    /// <returns>
    /// The lease's handle. For a message whose <see cref="ILeasedMessage.LockedUntil"/> has passed already, a handle lost
    /// from the start: <see cref="LeaseHandle.IsLost"/> true, its token canceled, counted and reported as a lost lease.
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException">
    /// <paramref name="message"/> was settled through a handle of this keeper already, or <paramref name="source"/>'s lock
    /// duration is not above <see cref="LeaseKeeperOptions.LockRenewalBuffer"/>.
    /// </exception>
    /// <exception cref="InvalidOperationException">
    /// <paramref name="message"/> is kept already (dispose its handle first), or the scheduler has finished or is shutting down.
    /// </exception>
    /// <exception cref="ObjectDisposedException">The keeper has stopped, or its scheduler has been disposed.</exception>
    public LeaseHandle Keep(ILeasedMessage message, IMessageSource? source = null)
    {
        ArgumentNullException.ThrowIfNull(message);
        ThrowIfStopped();
        Scheduler.ThrowIfNotAcceptingNewWork();
        if (source?.LockDuration is { } lockDuration && _options.LockRenewalBuffer is { } buffer && buffer >= lockDuration)
        {
            throw new ArgumentException($"The source's lock duration ({lockDuration}) must be above LeaseKeeperOptions.LockRenewalBuffer ({buffer}) of {this}.", nameof(source));
        }

        if (_settled.TryGetValue(message, out _))
        {
            throw new ArgumentException($"Message {message.MessageId} was settled through its LeaseHandle of {this} already: there is nothing to keep.", nameof(message));
        }

        var handle = new LeaseHandle(this, message, source, delivery: null);
        var now = TimeProvider.GetUtcNow();
        if (message.LockedUntil <= now)
        {
            return LostAtKeep(handle, now);
        }

        TaskCompletionSource? wake;
        lock (_gate)
        {
            ThrowIfStopped();
            if (!_kept.TryAdd(message, handle))
            {
                throw new InvalidOperationException($"Message {message.MessageId} is kept already by {this}; dispose its handle before keeping it again.");
            }

            _keptCount++;
            wake = ScheduleLocked(handle);
        }

        wake?.TrySetResult();
        return handle;
    }

    /// <summary>
    /// A message handed to <see cref="Keep"/> with its lock already gone (a starved pool or a prefetch buffer held it
    /// past its lock): its handle is lost from the start — released, token canceled, counted and reported once (the
    /// event raised in the lease lane) — so the caller's handler does not run it as if it were held.
    /// </summary>
    private LeaseHandle LostAtKeep(LeaseHandle handle, DateTimeOffset now)
    {
        handle.TryRelease();
        handle.TryMarkLost();
        var lost = new LeaseLostException($"Message {handle.Message.MessageId}'s lock ran out at {handle.Message.LockedUntil:O} (now {now:O}), before it was kept: the broker may give it to another consumer.");
        try
        {
            _ = LeaseLane.Run(() => ReportLost(handle, lost, "keep"));
        }
        catch (Exception ex) when (ex is ObjectDisposedException or InvalidOperationException)
        {
            ReportLost(handle, lost, "keep"); // the scheduler is stopping: reported here
        }

        return handle;
    }

    /// <summary>Takes a snapshot of the keeper's accounting.</summary>
    /// <returns>The snapshot.</returns>
    public LeaseKeeperStatistics GetStatistics()
    {
        int kept;
        TimeSpan? minSlack = null;
        LateRenewal? worst = null;
        lock (_gate)
        {
            kept = _keptCount;
            for (var i = 0; i < _recentSlackCount; i++)
            {
                var slack = TimeSpan.FromTicks(_recentSlack[i]);
                minSlack = minSlack is null || slack < minSlack ? slack : minSlack;
                var renewal = new LateRenewal(slack, TimeSpan.FromTicks(_recentPlannedSlack[i]));
                worst = worst is null || renewal.NormalizedSlack < worst.Value.NormalizedSlack ? renewal : worst;
            }
        }

        var lastLost = Interlocked.Read(ref _lastLostTicks);
        return new LeaseKeeperStatistics
        {
            Kept = kept,
            Renewals = Interlocked.Read(ref _renewals),
            RenewCalls = Interlocked.Read(ref _renewCalls),
            LeasesLost = Interlocked.Read(ref _leasesLost),
            LastLeaseLostAt = lastLost == long.MinValue ? null : new DateTimeOffset(lastLost, TimeSpan.Zero),
            MinRecentSlack = minSlack,
            WorstRecentRenewal = worst,
        };
    }

    /// <summary>
    /// Stops renewing every lease and waits for the renew calls under way to end; settling the messages is left to
    /// their owners. Handles are released (<see cref="LeaseHandle.IsKept"/> turns false), their tokens are not canceled.
    /// Safe to call more than once; later calls wait for the first.
    /// </summary>
    /// <returns>A task that completes when the keeper has stopped.</returns>
    public Task StopAsync()
    {
        TaskCompletionSource? first = null;
        Task stopped;
        lock (_gate)
        {
            if (_stopped is null)
            {
                first = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                _stopped = first.Task;
            }

            stopped = _stopped;
        }

        if (first is not null)
        {
            _ = RunStopAsync(first); // outside the lock: the stop cancels the calls under way, whose callbacks take it
        }

        return stopped;
    }

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The keeper's own stop (StopKeeperAsync). No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    private async Task RunStopAsync(TaskCompletionSource stopped)
    {
        try
        {
            await StopKeeperAsync();
            stopped.TrySetResult();
        }
        catch (Exception ex)
        {
            stopped.TrySetException(ex);
        }
    }

    /// <summary>Stops the keeper (see <see cref="StopAsync"/>).</summary>
    /// <returns>A task that completes when the keeper has stopped.</returns>
    public async ValueTask DisposeAsync()
    {
        await StopAsync();
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
        }

        _keeperStop.Dispose();
    }

    /// <inheritdoc />
    public override string ToString() => $"{nameof(LeaseKeeper)} '{Name}'";

    /// <summary>Puts a pump's lease in the schedule (the pump received its message).</summary>
    internal void Schedule(LeaseHandle lease)
    {
        Debug.Assert(lease.Delivery is not null, "Only a pump's leases are scheduled without Keep.");
        TaskCompletionSource? wake;
        lock (_gate)
        {
            _keptCount++;
            wake = ScheduleLocked(lease);
        }

        wake?.TrySetResult();
    }

    /// <summary>
    /// Stops renewing <paramref name="lease"/>: disposed, settled, or its owner stopped renewing it. Only the first call
    /// counts; a renewal answered "lost" after it is not a loss.
    /// </summary>
    internal void Release(LeaseHandle lease)
    {
        lock (_gate)
        {
            if (!lease.TryRelease())
            {
                return;
            }

            _schedule.Remove(lease);
            _keptCount--;
            if (lease.Delivery is null)
            {
                _kept.Remove(lease.Message);
            }
        }
    }

    /// <summary>
    /// The message of <paramref name="lease"/> was settled through its handle: keeping it again is refused at
    /// <see cref="Keep"/> (its lock is gone, though its <see cref="ILeasedMessage.LockedUntil"/> has not passed yet).
    /// </summary>
    internal void Settled(LeaseHandle lease)
    {
        if (lease.Delivery is null)
        {
            _settled.AddOrUpdate(lease.Message, null);
        }
    }

    /// <summary>Counts a lease lost (its handle's <see cref="LeaseHandle.TryMarkLost"/> won).</summary>
    internal void CountLost()
    {
        Interlocked.Increment(ref _leasesLost);
        Interlocked.Exchange(ref _lastLostTicks, TimeProvider.GetUtcNow().UtcTicks);
    }

    /// <summary>
    /// The keeper found <paramref name="lease"/> lost. A pump's lease goes to the pump's lost-lease path; a lease of
    /// <see cref="Keep"/> is marked lost (its token canceled) and reported once, unless it was released first.
    /// </summary>
    private void LeaseLostByKeeper(LeaseHandle lease, Exception? failure)
    {
        if (_onLost is not null)
        {
            _onLost(lease, failure);
            return;
        }

        lock (_gate)
        {
            if (lease.IsReleased || lease.IsLost)
            {
                return; // settled or disposed first: the refusal is the settlement's, not a loss
            }

            lease.TryMarkLost();
        }

        Release(lease);
        ReportLost(lease, failure, "renew");
    }

    /// <summary>
    /// A settlement through the handle of <paramref name="lease"/> (released as it began) was refused with
    /// <paramref name="failure"/>: the lock was gone before it reached the broker, though no renewal had told the keeper
    /// yet (one on its way, say, held up past the lock's end). That is a lost lease, counted and reported once like one
    /// the keeper found (the event raised in the lease lane), unless the keeper counted it already or the message was
    /// settled through a handle before (a second settlement's refusal is not a loss).
    /// </summary>
    internal void SettlementRefused(LeaseHandle lease, LeaseLostException failure, string operation)
    {
        if (lease.Delivery is not null || _settled.TryGetValue(lease.Message, out _))
        {
            return;
        }

        Debug.Assert(lease.IsReleased, "A settlement through the handle releases the lease before it is sent.");

        lock (_gate)
        {
            if (!lease.TryMarkLost())
            {
                return;
            }
        }

        try
        {
            _ = LeaseLane.Run(() => ReportLost(lease, failure, operation));
        }
        catch (Exception ex) when (ex is ObjectDisposedException or InvalidOperationException)
        {
            ReportLost(lease, failure, operation); // the scheduler has stopped (or is stopping): reported here, not lost
        }
    }

    /// <summary>Reports a lost lease once it was marked lost: log event 22, the LeaseLost event (an exception it throws is logged and dropped).</summary>
    private void ReportLost(LeaseHandle lease, Exception? failure, string operation)
    {
        _events.LeaseLost(failure, lease.Message.MessageId, operation);
        try
        {
            LeaseLost?.Invoke(this, new LeaseLostEventArgs(lease, failure));
        }
        catch (Exception ex)
        {
            _events.HandlerFailed(lease.Message, ex);
        }
    }

    /// <summary>A renewal of <paramref name="lease"/> succeeded with <paramref name="slack"/> lock time left when sent.</summary>
    private void Renewed(LeaseHandle lease, TimeSpan slack, TimeSpan roundTrip)
    {
        Interlocked.Increment(ref _renewals);
        lease.CountRenewal();
        _events.Renewed(lease.Message.MessageId, slack, roundTrip);
        lock (_gate)
        {
            _recentSlack[_recentSlackNext] = slack.Ticks;
            _recentPlannedSlack[_recentSlackNext] = lease.PlannedSlackTicks;
            _recentSlackNext = (_recentSlackNext + 1) % SlackWindow;
            _recentSlackCount = Math.Min(_recentSlackCount + 1, SlackWindow);
        }
    }

    /// <summary>Counts renew calls sent to the broker.</summary>
    private void CountRenewCalls(int calls) => Interlocked.Add(ref _renewCalls, calls);

    private void ThrowIfStopped()
    {
        if (Volatile.Read(ref _stopped) is not null || _keeperStopping)
        {
            throw new ObjectDisposedException(ToString(), $"{this} has stopped and keeps no more messages.");
        }
    }
}
