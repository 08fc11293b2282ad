using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

/// <summary>
/// What a <see cref="PriorityMessagePump"/> handler gets with each message: the message, the state of its lease, its
/// settle calls, and <see cref="ShouldYield"/>, so that CPU-heavy handlers can <c>await</c>
/// <see cref="PriorityScheduler.YieldIfNeeded"/> to let lease renewals run. A handler's unit test makes one without a
/// pump with <see cref="MessagePumpModelFactory.MessageContext"/>.
/// </summary>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "A public type handed to handlers: adding IDisposable would change the public API and invite a handler to dispose what the pump owns. Its CancellationTokenSources are plain ones (no timer, not linked), so they hold nothing that needs releasing and are collected with the context.")]
[DebuggerDisplay("{Message.MessageId,nq} (delivery {Message.DeliveryCount}, {LeaseState}, renewed {RenewalCount})")]
public sealed class MessageContext : ILaneWorkItem
{
    private readonly object _owner;       // the PriorityMessagePump, or a Detached (MessagePumpModelFactory: a handler's unit test)
    private readonly LeaseHandle? _lease; // null for a Detached one
    private readonly CancellationTokenSource _handlerCancellation = new();
    private TaskCompletionSource? _finished; // created only when someone waits for it (the stop path): see LazyTaskAsync
    private TaskCompletionSource? _settleEnded;
    private CancellationTokenSource? _settleAbort; // created only when a settle call needs the token, or at an abort
    private ISettleAbortListener? _settleAbortListener;
    private int _isFinished;
    private int _isSettleEnded;
    private int _settleAborted;
    private int _claimed;
    private ExecutionContext? _stepContext; // the execution context the next queued step runs in
    private ProcessingStep _step;
    private Task? _awaited;
    private Action? _resume; // created only when a handler or settlement does not complete at once

    internal MessageContext(PriorityMessagePump pump, ILeasedMessage message)
    {
        _owner = pump;
        Message = message;
        _lease = new LeaseHandle(pump.Keeper, message, pump.Source, this);
        (message as IPumpRoutedMessage)?.RouteSettlementsThrough(this);
    }

    /// <summary>A context without a pump (<see cref="MessagePumpModelFactory.MessageContext"/>): settle calls go to the message itself.</summary>
    internal MessageContext(ILeasedMessage message, PriorityScheduler? scheduler, TimeProvider timeProvider, CancellationToken cancellationToken)
    {
        _owner = new Detached(scheduler, timeProvider);
        Message = message;
        if (cancellationToken.CanBeCanceled)
        {
            cancellationToken.UnsafeRegister(static state => ((MessageContext)state!).CancelHandler(), this);
        }
    }

    /// <summary>Gets the message's lease in the pump's <see cref="LeaseKeeper"/> (a context of a pump only).</summary>
    internal LeaseHandle Lease
    {
        get
        {
            Debug.Assert(_lease is not null, "Only a pump's context has a lease; the pump's code never sees a factory-made one.");
            return _lease;
        }
    }

    /// <summary>Gets the pump's lease lane (a context of a pump only): the processor-shaped API renews from the handler there.</summary>
    internal Lane LeaseLane => Pump.LeaseLane;

    /// <summary>Gets the pump that owns this context (a context of a pump only).</summary>
    private PriorityMessagePump Pump
    {
        get
        {
            Debug.Assert(_owner is PriorityMessagePump, "Only a pump's context is processed by a pump.");
            return (PriorityMessagePump)_owner;
        }
    }
    /// <summary>Gets or sets whether the message's settlement was sent and its in-flight slot freed for the next receive (under the pump's lock).</summary>
    internal bool IsSettling { get; set; }

    /// <summary>Gets or sets the clock's timestamp when the handler started.</summary>
    internal long ProcessStart { get; set; }

    /// <summary>Gets or sets what the handler threw, or <see langword="null"/>.</summary>
    internal Exception? ProcessFailure { get; set; }

    /// <summary>Gets or sets the exception of a settle call the broker refused for good (not a lost lease), or <see langword="null"/>.</summary>
    internal Exception? SettleFailure { get; set; }

    /// <summary>Gets or sets the handler's span while it runs.</summary>
    internal Activity? ProcessSpan { get; set; }

    /// <summary>Gets the message.</summary>
    public ILeasedMessage Message { get; }

    /// <summary>Gets the state of the message's lease.</summary>
    public MessageLeaseState LeaseState => _lease is { IsLost: true }
        ? MessageLeaseState.Lost
        : Volatile.Read(ref _claimed) != 0 ? MessageLeaseState.SettlementClaimed : MessageLeaseState.Held;

    /// <summary>Gets when the lease expires unless renewed again.</summary>
    public DateTimeOffset LockedUntil => Message.LockedUntil;

    /// <summary>Gets how many times the pump has renewed this delivery's lease (0 for a context made by <see cref="MessagePumpModelFactory"/>).</summary>
    public int RenewalCount => _lease?.RenewalCount ?? 0;

    /// <summary>Gets a token canceled when the lease is lost or the pump stops without waiting any longer.</summary>
    public CancellationToken CancellationToken => _handlerCancellation.Token;

    /// <summary>Gets the pump's clock: a handler's delays and timeouts use it, so that they follow a virtual clock in tests.</summary>
    public TimeProvider TimeProvider => _owner is PriorityMessagePump pump ? pump.TimeProvider : ((Detached)_owner).TimeProvider;

    /// <summary>Gets whether more urgent work (a lease renewal) is waiting: a CPU-heavy handler should yield now.</summary>
    public bool ShouldYield => _owner is PriorityMessagePump pump ? pump.Scheduler.ShouldYield : ((Detached)_owner).Scheduler?.ShouldYield ?? false;

    /// <summary>What a context made without a pump runs on.</summary>
    private sealed record Detached(PriorityScheduler? Scheduler, TimeProvider TimeProvider);

    /// <inheritdoc />
    public override string ToString() => $"{Message.MessageId} (delivery {Message.DeliveryCount}, {LeaseState})";

    /// <summary>
    /// Completes the message now, in the lease lane; the pump will not settle it again when the handler returns. For
    /// handlers that settle explicitly (a processor-shaped API); a handler that simply returns gets the same.
    /// </summary>
    /// <returns><see langword="true"/> when the message was completed; <see langword="false"/> when it was already settled or its lease is lost (see <see cref="LeaseState"/>).</returns>
    public Task<bool> CompleteAsync() => SettleAsync(Settlement.Complete, reason: null, description: null);

    /// <summary>
    /// Abandons the message now, in the lease lane: the broker makes it visible again for another delivery; the pump
    /// will not settle it again when the handler returns.
    /// </summary>
    /// <returns><see langword="true"/> when the message was abandoned; <see langword="false"/> when it was already settled or its lease is lost (see <see cref="LeaseState"/>).</returns>
    public Task<bool> AbandonAsync() => SettleAsync(Settlement.Abandon, reason: null, description: null);

    /// <summary>
    /// Dead-letters the message now, in the lease lane; the pump will not complete or abandon it afterwards.
    /// </summary>
    /// <param name="reason">Why the message cannot be processed.</param>
    /// <returns><see langword="true"/> when the message was dead-lettered; <see langword="false"/> when it was already settled or its lease is lost.</returns>
    /// <exception cref="ArgumentException"><paramref name="reason"/> is null, empty or white space.</exception>
    public Task<bool> DeadLetterAsync(string reason) => DeadLetterAsync(reason, description: null);

    /// <summary>
    /// Dead-letters the message now with a reason and a description, in the lease lane; the pump will not complete or
    /// abandon it afterwards. The description travels where the transport carries one (Service Bus:
    /// <c>DeadLetterErrorDescription</c>; see <see cref="ILeasedMessage.DeadLetterAsync(string, string, CancellationToken)"/>).
    /// </summary>
    /// <param name="reason">Why the message cannot be processed.</param>
    /// <param name="description">More detail; <see langword="null"/> for none.</param>
    /// <returns><see langword="true"/> when the message was dead-lettered; <see langword="false"/> when it was already settled or its lease is lost.</returns>
    /// <exception cref="ArgumentException"><paramref name="reason"/> is null, empty or white space.</exception>
    public Task<bool> DeadLetterAsync(string reason, string? description)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        return SettleAsync(Settlement.DeadLetter, reason, description);
    }

    /// <summary>
    /// Settles the message now as <paramref name="settlement"/> (a transport's own kind, such as
    /// <see cref="Settlement.Defer"/>, or a dead-letter without a reason), in the lease lane, as <see cref="CompleteAsync"/> does.
    /// </summary>
    /// <returns><see langword="true"/> when the message was settled; <see langword="false"/> when it was already settled or its lease is lost.</returns>
    internal Task<bool> SettleAsync(Settlement settlement, string? reason, string? description)
    {
        if (_owner is not PriorityMessagePump pump)
        {
            return SettleDetachedAsync(settlement, reason, description);
        }

        return pump.LeaseLane.Run(() => pump.SettleAsync(this, settlement, reason, description));
    }

    /// <summary>
    /// The settle calls of a context made by <see cref="MessagePumpModelFactory.MessageContext"/>: the first one claims
    /// the message and settles it through the message's own call, in the caller's context; later ones return
    /// <see langword="false"/>, as with a pump.
    /// </summary>
    private async Task<bool> SettleDetachedAsync(Settlement settlement, string? reason, string? description)
    {
        if (settlement == Settlement.Defer)
        {
            throw new NotSupportedException("A context made by MessagePumpModelFactory settles through ILeasedMessage, which has no defer.");
        }

        if (!TryClaim())
        {
            return false;
        }

        try
        {
            await (settlement switch
            {
                Settlement.Complete => Message.CompleteAsync(CancellationToken.None),
                Settlement.Abandon => Message.AbandonAsync(CancellationToken.None),
                _ => Message.DeadLetterAsync(reason ?? "DeadLettered", description, CancellationToken.None),
            });
            return true;
        }
        catch (LeaseLostException)
        {
            return false;
        }
        finally
        {
            EndSettlement();
        }
    }

    /// <summary>
    /// A settle call made on <see cref="Message"/> itself (a pump-owned <see cref="IPumpRoutedMessage"/>): run in the
    /// lease lane through the pump's settlement, so that it is claimed once and counted as what it was; it fails as
    /// <see cref="ILeasedMessage"/>'s calls do (<see cref="LeaseLostException"/> when the message was already settled or
    /// its lease is lost). <paramref name="cancellationToken"/> is checked before the call; a settlement under way ends
    /// as the pump's own do (when the broker answers, or at the lock's expiry when the pump stops).
    /// </summary>
    internal Task SettleForMessageAsync(Settlement settlement, string? reason, string? description, CancellationToken cancellationToken) =>
        cancellationToken.IsCancellationRequested
            ? Task.FromCanceled(cancellationToken)
            : Pump.LeaseLane.Run(() => Pump.SettleForMessageAsync(this, settlement, reason, description));

    /// <summary>
    /// Gets a task that completes when the handler has returned and the message is settled, or when the stop path
    /// has settled or given up on the message (the handler may still be running then).
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the pump. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    internal Task Finished => LazyTaskAsync(ref _finished, ref _isFinished);

    /// <summary>
    /// Gets a token canceled when the stop path gives up on this delivery's settlement (its lock expired with renewals
    /// stopped): the settle call and its retry pauses end at once.
    /// </summary>
    internal CancellationToken SettleAbortToken
    {
        get
        {
            var abort = Volatile.Read(ref _settleAbort);
            if (abort is null)
            {
                var created = new CancellationTokenSource();
                abort = Interlocked.CompareExchange(ref _settleAbort, created, null) ?? created;
            }

            if (IsSettleAborted)
            {
                CancelInPlace(abort); // aborted before the source existed
            }

            return abort.Token;
        }
    }

    /// <summary>Gets whether the stop path has aborted this delivery's settlement.</summary>
    internal bool IsSettleAborted => Volatile.Read(ref _settleAborted) != 0;

    /// <summary>
    /// Gets a task that completes when the claimed settlement has ended (settled, failed, or the lease was lost), or
    /// when the message is finished. Unlike <see cref="Finished"/> it does not wait for the handler.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the pump. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    internal Task SettleEnded => LazyTaskAsync(ref _settleEnded, ref _isSettleEnded);

    /// <summary>Gets whether a settlement has been claimed or the lease was lost.</summary>
    internal bool IsClaimed => Volatile.Read(ref _claimed) != 0;

    /// <summary>Claims the one settlement of this delivery; only the first caller wins.</summary>
    internal bool TryClaim() => Interlocked.Exchange(ref _claimed, 1) == 0;

    /// <summary>Marks the lease lost; returns true for the first caller only.</summary>
    internal bool TryMarkLost() => Lease.TryMarkLost();

    internal void CancelHandler()
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

    /// <summary>Marks the claimed settlement ended.</summary>
    internal void EndSettlement() => CompleteLazy(ref _settleEnded, ref _isSettleEnded);

    /// <summary>Ends a settlement that outlived its lock: the settle call and its retries stop waiting.</summary>
    internal void AbortSettlement()
    {
        Interlocked.Exchange(ref _settleAborted, 1);
        if (Volatile.Read(ref _settleAbort) is { } abort)
        {
            CancelInPlace(abort);
        }

        Volatile.Read(ref _settleAbortListener)?.OnSettleAbort(SettleAbortToken);
    }

    /// <summary>
    /// Sets (or, with <see langword="null"/>, clears) the one listener told when the settlement is aborted; a listener
    /// set after the abort is told at once.
    /// </summary>
    internal void ListenForSettleAbort(ISettleAbortListener? listener)
    {
        Interlocked.Exchange(ref _settleAbortListener, listener);
        if (listener is not null && IsSettleAborted)
        {
            listener.OnSettleAbort(SettleAbortToken);
        }
    }

    internal void Finish()
    {
        CompleteLazy(ref _settleEnded, ref _isSettleEnded);
        CompleteLazy(ref _finished, ref _isFinished);
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

    private static void CancelInPlace(CancellationTokenSource source)
    {
        try
        {
#pragma warning disable VSTHRD103 // Cancel in the lane: CancelAsync would resume the stop path on the thread pool (see SettleAtStopAsync).
            source.Cancel();
#pragma warning restore VSTHRD103
        }
        catch (AggregateException)
        {
            // A settle call's registration threw; the call sees the cancellation anyway.
        }
    }

    // The steps of a message's processing (PriorityMessagePump.RunHandler, then settling in the lease lane, then
    // finishing), driven by the context itself: it is the work item queued into each lane, and the continuation of a
    // handler or settlement that does not complete at once. A message whose handler and settlement complete at once
    // allocates nothing here.
    /// <summary>The next step of processing.</summary>
    internal enum ProcessingStep
    {
        /// <summary>Run the handler (processing lane).</summary>
        Handler,

        /// <summary>The handler's task has completed: record it.</summary>
        Handled,

        /// <summary>Settle (lease lane).</summary>
        Settle,

        /// <summary>The settlement's task has completed: finish.</summary>
        Settled,
    }

    /// <summary>
    /// Queues the handler into <paramref name="lane"/> as tracked work, with this context as the queued item (no
    /// delegate, closure or task per message); the caller's execution context flows to the handler as with
    /// <see cref="Lane.Run(Func{Task})"/>. Throws where <c>Lane.Run</c> throws.
    /// </summary>
    internal void StartProcessing(Lane lane)
    {
        _step = ProcessingStep.Handler;
        _stepContext = ExecutionContext.Capture();
        lane.StartTracked(this);
    }

    /// <summary>Queues <paramref name="step"/> into <paramref name="lane"/>; the current execution context flows to it, as across an await.</summary>
    internal void ContinueIn(Lane lane, ProcessingStep step)
    {
        _step = step;
        _stepContext = ExecutionContext.Capture();
        lane.Post(this);
    }

    /// <summary>
    /// Runs <paramref name="step"/> once <paramref name="task"/> completes, as an await in the current lane would: posted
    /// back to the lane (never through the thread pool, which would let a virtual clock run ahead of it), in the current
    /// execution context.
    /// </summary>
    internal void ContinueWhenDone(Task task, ProcessingStep step)
    {
        _step = step;
        _awaited = task;
        _resume ??= RunStep;
        task.GetAwaiter().OnCompleted(_resume);
    }

    /// <summary>Runs in the lane the step was queued into.</summary>
    void ILaneWorkItem.Execute()
    {
        var captured = _stepContext;
        _stepContext = null;
        if (captured is null)
        {
            RunStep();
            return;
        }

        ExecutionContext.Run(captured, static state => ((MessageContext)state!).RunStep(), this);
    }

    private void RunStep()
    {
        var awaited = _awaited;
        _awaited = null;
        try
        {
            switch (_step)
            {
                case ProcessingStep.Handler:
                    Pump.RunHandler(this);
                    break;
                case ProcessingStep.Handled:
                    Pump.OnHandled(this, awaited);
                    break;
                case ProcessingStep.Settle:
                    Pump.Settle(this);
                    break;
                default:
                    Pump.EndProcessing(this);
                    break;
            }
        }
        catch (Exception)
        {
            // Only a throwing logger or telemetry listener gets here, after each step has queued the next (or finished
            // the message) in its finally block. As in the async method these steps replace, it must neither end the
            // scheduler's run (a posted callback's exception would) nor stop the message: the next step still runs.
        }
    }
}
