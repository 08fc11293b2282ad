using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

/// <summary>
/// One message a <see cref="PriorityMessagePump"/> received, from its receive to its end: its lease in the pump's
/// keeper, the one claim on its settlement, the handler's token, the signals the stop path waits on, and
/// <see cref="ProcessAsync"/>, the message's path read top to bottom (handler in the processing lane, settlement in the
/// lease lane, the end). The handler sees it through <see cref="Context"/>.
/// </summary>
/// <remarks>
/// The path calls the pump in one direction only (its handler, events, settlement and books). The pump calls back into
/// a delivery only from the stop path (<see cref="PriorityMessagePump"/>'s <c>SettleAtStopAsync</c>): it claims it
/// (<see cref="TryClaim"/>), waits for it (<see cref="Finished"/>, <see cref="SettleEnded"/>) or aborts its settlement
/// (<see cref="AbortSettlement"/>); the lease keeper, through the pump, marks its lease lost and cancels its handler.
/// </remarks>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "Its CancellationTokenSources are plain ones (no timer, not linked): they hold nothing that needs releasing and are collected with the delivery.")]
[DebuggerDisplay("{Message.MessageId,nq} (delivery {Message.DeliveryCount}, {LeaseState}, settling {IsSettling})")]
internal sealed class PumpDelivery : IDelivery, ISettlementOwner
{
    private readonly PriorityMessagePump _pump;
    private readonly CancellationTokenSource _handlerCancellation = new();
    private TaskCompletionSource? _finished; // created only when someone waits for it (the stop path): see LazyTaskAsync
    private TaskCompletionSource? _settleEnded;
    private LazyCancellation _settleAbort; // its source is made only when a settle call needs the token, or at an abort
    private ISettleAbortListener? _settleAbortListener;
    private int _isFinished;
    private int _isSettleEnded;
    private int _settleAborted;
    private int _claimed;
    private int _handedOff;
    private LaneWork? _work; // the processing lane's count of this path: a graceful scheduler stop waits for it

    /// <summary>Takes a received message: its lease (not yet scheduled), its handler's view, and its own settle calls routed through the pump.</summary>
    internal PumpDelivery(PriorityMessagePump pump, ILeasedMessage message)
    {
        _pump = pump;
        Lease = new LeaseHandle(pump.Keeper, message, pump.Source, this);
        Context = new MessageContext(this);
        (message as ISettleableMessage)?.RouteSettlementsThrough(this);
    }

    /// <inheritdoc />
    public ILeasedMessage Message => Lease.Message;

    /// <summary>Gets what the handler gets: the view of this delivery.</summary>
    public MessageContext Context { get; }

    /// <summary>Gets the message's lease in the pump's <see cref="LeaseKeeper"/>.</summary>
    public LeaseHandle Lease { get; }

    /// <summary>Gets the pump's lease lane: the processor-shaped API renews from the handler there.</summary>
    public Lane LeaseLane => _pump.LeaseLane;

    /// <inheritdoc />
    public MessageLeaseState LeaseState => Lease.IsLost
        ? MessageLeaseState.Lost
        : IsClaimed ? MessageLeaseState.SettlementClaimed : MessageLeaseState.Held;

    /// <inheritdoc />
    public int RenewalCount => Lease.RenewalCount;

    /// <inheritdoc />
    public CancellationToken CancellationToken => _handlerCancellation.Token;

    /// <inheritdoc />
    public TimeProvider TimeProvider => _pump.TimeProvider;

    /// <inheritdoc />
    public bool ShouldYield => _pump.Scheduler.ShouldYield;

    /// <summary>Gets or sets whether the message's settlement was sent and its in-flight slot freed for the next receive (under the pump's lock).</summary>
    public bool IsSettling { get; set; }

    /// <summary>Gets or sets the exception of a settle call the broker refused for good (not a lost lease), or <see langword="null"/>.</summary>
    public Exception? SettleFailure { get; set; }

    /// <summary>Gets whether a settlement has been claimed or the lease was lost.</summary>
    public bool IsClaimed => Volatile.Read(ref _claimed) != 0;

    /// <summary>Gets whether the message reached its handler (<see cref="HandOff"/>): a lease lost before that means the handler never ran.</summary>
    public bool IsHandedOff => Volatile.Read(ref _handedOff) != 0;

    /// <summary>Gets whether the stop path has aborted this delivery's settlement.</summary>
    public bool IsSettleAborted => Volatile.Read(ref _settleAborted) != 0;

    /// <summary>
    /// Gets a task that completes when the message is finished: its path has ended, or the stop path has settled or
    /// given up on it (the handler may still be running then).
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the pump. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    public Task Finished => LazyTaskAsync(ref _finished, ref _isFinished);

    /// <summary>
    /// Gets a task that completes when the claimed settlement has ended (settled, failed, or the lease was lost), or
    /// when the message is finished. Unlike <see cref="Finished"/> it does not wait for the handler.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the pump. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    public Task SettleEnded => LazyTaskAsync(ref _settleEnded, ref _isSettleEnded);

    /// <summary>
    /// Gets a token canceled when the stop path gives up on this delivery's settlement (its lock expired with renewals
    /// stopped): the settle call and its retry pauses end at once.
    /// </summary>
    public CancellationToken SettleAbortToken => _settleAbort.Token(IsSettleAborted);

    /// <summary>Gets whether the message's path has ended: its handler has returned (or was never called) and its end has run.</summary>
    public bool IsPathEnded => _work?.IsEnded ?? false;

    /// <summary>
    /// Starts <see cref="ProcessAsync"/> as tracked work of the processing lane: until it ends, a graceful stop of the
    /// scheduler waits for it, as for <see cref="Lane.Run(Func{Task})"/>. Throws where <c>Lane.Run</c> throws (the
    /// scheduler no longer takes work), before anything of the path has run.
    /// </summary>
    public void Start()
    {
        _work = _pump.ProcessingLane.TrackWork(); // ended by ProcessAsync's last step (End)
        _ = ProcessAsync();
    }

    /// <summary>
    /// The message's path, top to bottom. Every await comes back through a lane (the lane's context, or
    /// <see cref="Lane.SwitchTo"/>), never through the thread pool, which would let a virtual clock run ahead of it; the
    /// caller's execution context flows to the handler. Never throws: a throwing logger or telemetry listener neither
    /// ends a scheduler's run nor strands the message.
    /// </summary>
    private async Task ProcessAsync()
    {
        try
        {
            // 1. [processing lane] The handler, unless the lease keeper found the lease lost (or the stop path claimed
            //    the message) before it started: the broker may already deliver the message elsewhere.
            await _pump.ProcessingLane.SwitchTo();
            if (IsClaimed || !HandOff())
            {
                return;
            }

            var started = _pump.TimeProvider.GetTimestamp();
            Activity? span = null;
            Exception? failure = null;
            try
            {
                span = _pump.Events.Processing(Message); // Activity.Current inside the handler
                await (_pump.Handler(Context, CancellationToken)
                    ?? throw new InvalidOperationException("The message handler returned null; it must return a task."));
            }
            catch (Exception ex)
            {
                failure = ex;
            }

            ReportProcessed(span, _pump.TimeProvider.GetElapsedTime(started), failure);

            // 2. [lease lane] Settling releases the lock: as urgent as keeping it. Complete, or abandon on failure,
            //    unless the message was claimed meanwhile (its lease lost, or settled by the handler or at stop).
            await _pump.LeaseLane.SwitchTo();
            if (IsClaimed)
            {
                return;
            }

            if (failure is not null)
            {
                _pump.Events.HandlerFailed(Message, failure);
            }

            var settling = _pump.SettleAsync(this, failure is null ? MessageSettlement.Complete : MessageSettlement.Abandon());

            // 3. The handler has returned and its settlement is on its way: the slot is free for the next receive.
            if (!settling.IsCompleted)
            {
                _pump.FreeSlotAtSettlement(this);
                await ((Task)settling).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
            }
        }
        catch (Exception)
        {
            // Only a throwing logger or telemetry listener gets here: the message still finishes below (as at the lock's
            // expiry, the broker delivers it again if it was not settled).
        }
        finally
        {
            // 4. The end, in the lane where the path ended.
            End();
        }
    }

    /// <summary>
    /// The end of the path: the lease leaves the keeper and the message the pump's books (<see cref="PriorityMessagePump.Finish"/>);
    /// the processing lane's tracked work ends (see <see cref="Start"/>); a message that listens
    /// (<see cref="IHandlerEndListener"/>) is told its handler is over.
    /// </summary>
    private void End()
    {
        try
        {
            _pump.Finish(this);
        }
        finally
        {
            _work?.Dispose();
            (Message as IHandlerEndListener)?.OnHandlerEnded();
        }
    }

    /// <summary>
    /// The hand-off to the handler: records the lock time left (the headroom); a message whose lock is already gone is
    /// not handed over — running its handler as if the lock were held would process it beside the consumer the
    /// broker gives it to next — and is counted as a lost lease instead. Returns whether the handler may run.
    /// </summary>
    private bool HandOff()
    {
        var headroom = Message.LockedUntil - _pump.TimeProvider.GetUtcNow();
        if (headroom > TimeSpan.Zero)
        {
            Volatile.Write(ref _handedOff, 1);
            _pump.Events.HandedOff(headroom);
            return true;
        }

        _pump.LostAtHandOff(this);
        return false;
    }

    /// <summary>Claims the one settlement of this delivery; only the first caller wins.</summary>
    public bool TryClaim() => Interlocked.Exchange(ref _claimed, 1) == 0;

    /// <summary>Marks the lease lost; returns true for the first caller only.</summary>
    public bool TryMarkLost() => Lease.TryMarkLost();

    /// <summary>Cancels the handler's token (the lease is lost, or the stop gave up waiting).</summary>
    public void CancelHandler()
    {
        try
        {
            _handlerCancellation.Cancel();
        }
        catch (AggregateException)
        {
            // Callbacks registered by the handler threw; the handler sees the cancellation anyway.
        }
    }

    /// <inheritdoc />
    public void HandlerFailed(Exception failure) => _pump.Events.HandlerFailed(Message, failure);

    /// <summary>
    /// A settle call of the handler (<see cref="MessageContext.CompleteAsync"/> and its siblings, or a transport's own
    /// kind such as <see cref="SettlementKind.Defer"/>): run in the lease lane through the pump's settlement.
    /// </summary>
    /// <returns><see langword="true"/> when the message was settled; <see langword="false"/> when it was already settled or its lease is lost.</returns>
    public Task<bool> SettleAsync(MessageSettlement settlement) =>
        _pump.LeaseLane.Run(() => _pump.SettleAsync(this, settlement));

    /// <summary>
    /// A settle call made on <see cref="Message"/> itself (a pump-owned <see cref="ISettleableMessage"/>): run in the
    /// lease lane through the pump's settlement, so that it is claimed once and counted as what it was; it fails as
    /// <see cref="ILeasedMessage"/>'s calls do (<see cref="LeaseLostException"/> when the message was already settled or
    /// its lease is lost). <paramref name="cancellationToken"/> is checked before the call; a settlement under way ends
    /// as the pump's own do (when the broker answers, or at the lock's expiry when the pump stops).
    /// </summary>
    Task ISettlementOwner.SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(settlement);
        return cancellationToken.IsCancellationRequested
            ? Task.FromCanceled(cancellationToken)
            : _pump.LeaseLane.Run(() => _pump.SettleForMessageAsync(this, settlement));
    }

    /// <summary>Marks the claimed settlement ended.</summary>
    public void EndSettlement() => CompleteLazy(ref _settleEnded, ref _isSettleEnded);

    /// <summary>Ends a settlement that outlived its lock (the stop path): the settle call and its retries stop waiting.</summary>
    public void AbortSettlement()
    {
        Interlocked.Exchange(ref _settleAborted, 1);
        _settleAbort.Cancel();

        Volatile.Read(ref _settleAbortListener)?.OnSettleAbort(SettleAbortToken);
    }

    /// <summary>
    /// Sets (or, with <see langword="null"/>, clears) the one listener told when the settlement is aborted; a listener
    /// set after the abort is told at once.
    /// </summary>
    public void ListenForSettleAbort(ISettleAbortListener? listener)
    {
        Interlocked.Exchange(ref _settleAbortListener, listener);
        if (listener is not null && IsSettleAborted)
        {
            listener.OnSettleAbort(SettleAbortToken);
        }
    }

    /// <summary>Signals the message finished (called by the pump's books once, with the settlement ended too).</summary>
    public void SignalFinished()
    {
        CompleteLazy(ref _settleEnded, ref _isSettleEnded);
        CompleteLazy(ref _finished, ref _isFinished);
    }

    /// <inheritdoc />
    public override string ToString() => $"{Message.MessageId} (delivery {Message.DeliveryCount}, {LeaseState})";

    /// <summary>The handler's duration and the end of its span; a throwing sink does not keep the message from settling.</summary>
    private void ReportProcessed(Activity? span, TimeSpan duration, Exception? failure)
    {
        try
        {
            _pump.Events.Processed(span, duration, failure);
        }
        catch (Exception)
        {
            // A throwing telemetry listener: the settlement below does not depend on it.
        }
    }

    /// <summary>
    /// The task of a completion signal whose source is created only when someone asks for it: a completed task once
    /// <paramref name="done"/> is set, otherwise the (shared) source's task, completed by <see cref="CompleteLazy"/>.
    /// Most messages finish without anyone waiting, and allocate neither.
    /// </summary>
    private static Task LazyTaskAsync(ref TaskCompletionSource? source, ref int done)
    {
        if (Volatile.Read(ref done) != 0)
        {
            return Task.CompletedTask;
        }

        var existing = Volatile.Read(ref source);
        if (existing is null)
        {
            var created = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            existing = Interlocked.CompareExchange(ref source, created, null) ?? created;
        }

        if (Volatile.Read(ref done) != 0)
        {
            existing.TrySetResult(); // completed while the source was being created
        }

        return existing.Task;
    }

    private static void CompleteLazy(ref TaskCompletionSource? source, ref int done)
    {
        Interlocked.Exchange(ref done, 1);
        Volatile.Read(ref source)?.TrySetResult();
    }
}
