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
public sealed partial class MessageContext
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
}
