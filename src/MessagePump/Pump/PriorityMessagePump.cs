using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace PriorityAsync.MessagePump;

/// <summary>
/// A lease-aware message consumer on the lanes of a <see cref="PriorityScheduler"/>: the leases in flight are renewed
/// by one keeper in the lease lane ahead of everything else, those that fall due together in one call; each handler runs in the processing lane, and new messages are received
/// in the receive lane only when nothing more urgent is ready (spare capacity), in batches sized to the broker's round
/// trip, and never more than <see cref="MaxInFlight"/> at once (besides those whose settlement is on its way: see
/// <see cref="MessagePumpOptions.ReceiveDuringSettlement"/>).
/// </summary>
/// <remarks>
/// <para>
/// A handler that returns completes the message; one that throws abandons it for redelivery (the broker dead-letters
/// it after its last delivery). When a renewal finds the lease lost, the handler's token is canceled and the message
/// is not completed. Settlement runs in the lease lane, and each delivery is settled at most once.
/// </para>
/// <para>
/// Works on a <see cref="PriorityAsyncContext"/> (one thread, optionally on virtual time) and on a
/// <see cref="PriorityTaskScheduler"/>. The pump does not use <c>ConfigureAwait(false)</c>: its continuations stay in their lanes.
/// </para>
/// </remarks>
[DebuggerDisplay("{ToString(),nq}: {_state}, {_inFlight.Count} in flight ({_settling} settling), peak {_peakInFlight}")]
public sealed partial class PriorityMessagePump : IAsyncDisposable
{
    private readonly IMessageSource _source;
    private readonly Func<MessageContext, CancellationToken, Task> _handler;
    private readonly MessagePumpOptions _options;
    private readonly Lock _gate = new();
    private readonly HashSet<PumpDelivery> _inFlight = [];
    private int _settling; // messages of _inFlight whose settlement was sent (see FreeSlotAtSettlement); under _gate
    private readonly CancellationTokenSource _receiveCancellation = new();
    private readonly ReceiveAdmission _admission;
    private readonly CompletionBatcher? _completions;
    private readonly PumpEvents _events;
    private TaskCompletionSource? _capacityWaiter;
    private int _maxInFlight; // written under _gate (UpdateMaxInFlight), read by the admission under it
    private CancellationTokenSource? _pauseWake; // the receive loop's pause after an empty receive, while it lasts (WakeReceive)
    private bool _receiveCallUnderWay; // a receive call has begun in the lease lane and not yet started its messages; under _gate
    private TaskCompletionSource? _receiveCallEnded; // what the stop waits on while it is (ReceiveCallEndedAsync); under _gate
    private TaskCompletionSource? _stopped;
    private State _state;
    private bool _disposed;
    private int _peakInFlight;
    private long _stopStartedTicks; // UTC ticks when the stop began, 0 before it (GetStatistics: StoppingSince)
    private long _stopOverrunTicks = -1; // how far the ended stop ran past ShutdownTimeout; -1 until it has ended
    private PumpDelivery[] _givenUpAtStop = []; // deliveries the stop settled while their handlers still ran

    /// <summary>Creates a pump; it receives nothing until <see cref="StartAsync"/>.</summary>
    /// <param name="source">The queue to consume.</param>
    /// <param name="handler">Processes one message; it returns to complete it and throws to abandon it.</param>
    /// <param name="scheduler">The scheduler whose lanes the pump runs in.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <param name="logger">The logger; <see langword="null"/> for none.</param>
    /// <exception cref="ArgumentNullException"><paramref name="source"/>, <paramref name="handler"/> or <paramref name="scheduler"/> is null.</exception>
    /// <exception cref="ArgumentException">An option breaks its rule; the exception names it.</exception>
    public PriorityMessagePump(
        IMessageSource source,
        Func<MessageContext, CancellationToken, Task> handler,
        PriorityScheduler scheduler,
        MessagePumpOptions? options = null,
        ILogger? logger = null)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(handler);
        ArgumentNullException.ThrowIfNull(scheduler);
        _options = (options ?? new MessagePumpOptions()).Clone();
        _options.Validate(source.LockDuration, scheduler);
        _source = source;
        _handler = handler;
        Scheduler = scheduler;
        LeaseLane = scheduler.GetLane(_options.LeaseLane);
        ProcessingLane = scheduler.GetLane(_options.ProcessingLane);
        ReceiveLane = scheduler.GetLane(_options.ReceiveLane);
        TimeProvider = _options.TimeProvider ?? scheduler.TimeProvider;
        _maxInFlight = _options.MaxInFlight
            ?? (int)Math.Min(int.MaxValue, (long)Math.Max(1, ProcessingLane.TaskScheduler.MaximumConcurrencyLevel) * MessagePumpOptions.DefaultInFlightPerWorker);
        _admission = new ReceiveAdmission(_options.MaxBatchSize);
        _events = new PumpEvents(_options.Name, source, _options.MeterFactory, logger ?? NullLogger.Instance);
        Keeper = new LeaseKeeper(scheduler, LeaseKeeperOptions.ForPump(_options), _events, OnKeeperFoundLeaseLost);
        _completions = _options.MaxBatchSize > 1 && source.CompletesBatchesNatively ? new CompletionBatcher(source, _options.MaxBatchSize, _events.TransportContractBroken) : null;
    }

    private enum State
    {
        Created,
        Running,
        Stopping,
        Stopped,
    }

    /// <summary>Gets the pump's name.</summary>
    public string Name => _options.Name;

    /// <summary>Gets the scheduler the pump runs on.</summary>
    public PriorityScheduler Scheduler { get; }

    /// <summary>Gets the lane that renews and settles leases.</summary>
    public Lane LeaseLane { get; }

    /// <summary>Gets the lane handlers run in.</summary>
    public Lane ProcessingLane { get; }

    /// <summary>Gets the lane that receives messages.</summary>
    public Lane ReceiveLane { get; }

    /// <summary>Gets the pump's clock.</summary>
    public TimeProvider TimeProvider { get; }

    /// <summary>Gets the keeper of the pump's leases (built from the pump's options; reports through the pump's events).</summary>
    internal LeaseKeeper Keeper { get; }

    /// <summary>Gets the handler a message's path (<see cref="PumpDelivery"/>) runs.</summary>
    internal Func<MessageContext, CancellationToken, Task> Handler => _handler;

    /// <summary>Gets the pump's events: a message's path reports its handler through them.</summary>
    internal PumpEvents Events => _events;

    /// <summary>Gets the queue the pump consumes.</summary>
    internal IMessageSource Source => _source;

    /// <summary>Gets how many messages may be in flight at once (the option, or the default derived from the scheduler; see <see cref="UpdateMaxInFlight"/>).</summary>
    public int MaxInFlight => Volatile.Read(ref _maxInFlight);

    /// <summary>
    /// Changes <see cref="MaxInFlight"/> while the pump runs (or before it starts). Admission only: a higher limit lets
    /// the receive loop ask for more at once; a lower one receives nothing more until fewer than the new limit are in
    /// flight. No message in flight is touched: its handler, lease and settlement go on as they were.
    /// </summary>
    /// <param name="maxInFlight">The new limit; at least 1.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxInFlight"/> is zero or negative.</exception>
    public void UpdateMaxInFlight(int maxInFlight)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxInFlight);
        lock (_gate)
        {
            Volatile.Write(ref _maxInFlight, maxInFlight);
            if (HasCapacityLocked())
            {
                SignalCapacityLocked(); // a receive loop waiting for room looks again
            }
        }
    }

    /// <summary>Starts receiving in the receive lane. Returns at once.</summary>
    /// <param name="cancellationToken">Not used: starting does not wait.</param>
    /// <returns>A completed task.</returns>
    /// <exception cref="InvalidOperationException">The pump was already started.</exception>
    /// <exception cref="ObjectDisposedException">The pump, or its scheduler, has been disposed.</exception>
    public Task StartAsync(CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            if (_state != State.Created)
            {
                throw new InvalidOperationException($"Message pump '{Name}' was already started; a pump runs once.");
            }

            var token = _receiveCancellation.Token;
            // Throws, unwrapped, on a stopped scheduler. Not awaited by the stop (see StopCoreAsync): it ends by itself once
            // stopped, and a graceful stop of the scheduler waits for it as for any Lane.Run.
            _ = ReceiveLane.Run(() => ReceiveLoopAsync(token));
            Keeper.Start();
            _state = State.Running;
        }

        _events.Started(Scheduler.Name, MaxInFlight);
        return Task.CompletedTask;
    }

    /// <summary>
    /// Stops receiving, lets the messages in flight finish within <see cref="MessagePumpOptions.ShutdownTimeout"/>,
    /// then cancels the remaining handlers and abandons their messages, so that nothing stays locked. Safe to call
    /// more than once; later calls wait for the first.
    /// </summary>
    /// <param name="cancellationToken">Ends the wait for messages in flight early: they are abandoned at once.</param>
    /// <returns>A task that completes when the pump has stopped.</returns>
    public Task StopAsync(CancellationToken cancellationToken = default)
    {
        TaskCompletionSource? first = null;
        Task stopped;
        lock (_gate)
        {
            if (_stopped is null)
            {
                first = _stopped = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                _state = _state == State.Created ? State.Stopped : State.Stopping;
            }

            stopped = _stopped.Task;
        }

        if (first is not null)
        {
            _ = RunStopAsync(first, cancellationToken);
        }

        return stopped;
    }

    /// <summary>Stops the pump (see <see cref="StopAsync"/>).</summary>
    /// <returns>A task that completes when the pump has stopped.</returns>
    public async ValueTask DisposeAsync()
    {
        lock (_gate)
        {
            _disposed = true;
        }

        await StopAsync();
        _receiveCancellation.Dispose();
        await Keeper.DisposeAsync();
    }

    /// <inheritdoc />
    public override string ToString() => $"{nameof(PriorityMessagePump)} '{Name}'";

    /// <summary>
    /// Checks, in Debug builds, that the pump's books agree (call under <see cref="_gate"/>, after a change): the
    /// messages whose settlement freed their slot are some of those in flight, and only when
    /// <see cref="MessagePumpOptions.ReceiveDuringSettlement"/> lets them; the peak covers the present; the stop waits
    /// on a receive call only while one is under way.
    /// </summary>
    [Conditional("DEBUG")]
    private void AssertInvariantsLocked()
    {
        Debug.Assert(_gate.IsHeldByCurrentThread, "The pump's books are read under its lock.");
        Debug.Assert(_settling >= 0 && _settling <= _inFlight.Count, $"{_settling} settling of {_inFlight.Count} in flight.");
        Debug.Assert(_settling == 0 || _options.ReceiveDuringSettlement, "A settlement freed a slot although ReceiveDuringSettlement is off.");
        Debug.Assert(_settling == _inFlight.Count(static d => d.IsSettling), "The settling count differs from the deliveries marked settling.");
        Debug.Assert(_peakInFlight >= _inFlight.Count, $"Peak {_peakInFlight} under the {_inFlight.Count} in flight.");
        Debug.Assert(_receiveCallEnded is null || _receiveCallUnderWay, "The stop waits on a receive call that is not under way.");
    }

    /// <summary>Takes a snapshot of the pump's accounting.</summary>
    /// <returns>The snapshot.</returns>
    public MessagePumpStatistics GetStatistics()
    {
        int inFlight;
        lock (_gate)
        {
            inFlight = _inFlight.Count;
        }

        var statistics = _events.Statistics(inFlight, Volatile.Read(ref _peakInFlight));
        var stopStarted = Volatile.Read(ref _stopStartedTicks);
        if (stopStarted == 0)
        {
            return statistics;
        }

        var endedOverrun = Volatile.Read(ref _stopOverrunTicks);
        var since = new DateTimeOffset(stopStarted, TimeSpan.Zero);
        var overrun = endedOverrun >= 0 ? TimeSpan.FromTicks(endedOverrun) : StopOverrun(TimeProvider.GetUtcNow() - since);
        return statistics with
        {
            StoppingSince = endedOverrun < 0 ? since : null,
            StopOverrun = overrun > TimeSpan.Zero ? overrun : null,
            HandlersRunningAfterStop = Volatile.Read(ref _givenUpAtStop).Count(static d => !d.IsPathEnded),
        };
    }

    /// <summary>How far a stop that has run for <paramref name="ran"/> is past <see cref="MessagePumpOptions.ShutdownTimeout"/> (zero when within it, or when it is infinite).</summary>
    private TimeSpan StopOverrun(TimeSpan ran) =>
        _options.ShutdownTimeout == Timeout.InfiniteTimeSpan || ran <= _options.ShutdownTimeout ? TimeSpan.Zero : ran - _options.ShutdownTimeout;

    /// <summary>
    /// Takes a snapshot of the lease side of the pump: the statistics of the keeper that renews its messages' locks
    /// (lock time left at renewal, renew calls, leases lost), which the lease health check judges. Its
    /// <see cref="LeaseKeeperStatistics.LeasesLost"/> counts what <see cref="MessagePumpStatistics.LeasesLost"/> does.
    /// </summary>
    /// <returns>The snapshot.</returns>
    public LeaseKeeperStatistics GetLeaseStatistics()
    {
        return Keeper.GetStatistics();
    }
}
