using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

/// <summary>
/// What a <see cref="PriorityMessagePump"/> handler gets with each message: the message, the state of its lease, and the
/// scheduler's lanes, so that CPU-heavy handlers can check <see cref="ShouldYield"/> and <c>await</c>
/// <see cref="PriorityScheduler.YieldIfNeeded"/> to let lease renewals run.
/// </summary>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "A public type handed to handlers: adding IDisposable would change the public API and invite a handler to dispose what the pump owns. Its CancellationTokenSources are plain ones (no timer, not linked), so they hold nothing that needs releasing and are collected with the context.")]
public sealed partial class MessageContext
{
    private readonly PriorityMessagePump _pump;
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
        _pump = pump;
        Message = message;
        Lease = new LeaseHandle(pump.Keeper, message, pump.Source, this);
        (message as IPumpRoutedMessage)?.RouteSettlementsThrough(this);
    }

    /// <summary>Gets the message's lease in the pump's <see cref="LeaseKeeper"/>.</summary>
    internal LeaseHandle Lease { get; }

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
    public MessageLeaseState LeaseState => Lease.IsLost
        ? MessageLeaseState.Lost
        : Volatile.Read(ref _claimed) != 0 ? MessageLeaseState.SettlementClaimed : MessageLeaseState.Held;

    /// <summary>Gets when the lease expires unless renewed again.</summary>
    public DateTimeOffset LockedUntil => Message.LockedUntil;

    /// <summary>Gets how many times the pump has renewed this delivery's lease.</summary>
    public int RenewalCount => Lease.RenewalCount;

    /// <summary>Gets a token canceled when the lease is lost or the pump stops without waiting any longer.</summary>
    public CancellationToken CancellationToken => _handlerCancellation.Token;

    /// <summary>Gets the scheduler the pump runs on.</summary>
    public PriorityScheduler Scheduler => _pump.Scheduler;

    /// <summary>Gets the lane that renews and settles leases.</summary>
    public Lane LeaseLane => _pump.LeaseLane;

    /// <summary>Gets the lane the handler runs in.</summary>
    public Lane ProcessingLane => _pump.ProcessingLane;

    /// <summary>Gets the lane that receives messages.</summary>
    public Lane ReceiveLane => _pump.ReceiveLane;

    /// <summary>Gets the pump's clock.</summary>
    public TimeProvider TimeProvider => _pump.TimeProvider;

    /// <summary>Gets whether more urgent work (a lease renewal) is waiting: a CPU-heavy handler should yield now.</summary>
    public bool ShouldYield => _pump.Scheduler.ShouldYield;

    /// <inheritdoc />
    public override string ToString() => $"{Message.MessageId} (delivery {Message.DeliveryCount}, {LeaseState})";
}
