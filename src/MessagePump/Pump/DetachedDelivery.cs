using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

/// <summary>
/// The delivery behind a <see cref="MessageContext"/> made without a pump (<see cref="MessagePumpModelFactory.MessageContext"/>):
/// nothing renews the lock; the first settle call claims the message and settles it through the message's own call,
/// in the caller's context; later ones return <see langword="false"/>, as with a pump.
/// </summary>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "Its CancellationTokenSource is a plain one (no timer, not linked): it holds nothing that needs releasing and is collected with the delivery.")]
internal sealed class DetachedDelivery : IDelivery
{
    private readonly PriorityScheduler? _scheduler;
    private readonly CancellationTokenSource _handlerCancellation = new();
    private int _claimed;

    public DetachedDelivery(ILeasedMessage message, PriorityScheduler? scheduler, TimeProvider timeProvider, CancellationToken cancellationToken)
    {
        Message = message;
        _scheduler = scheduler;
        TimeProvider = timeProvider;
        if (cancellationToken.CanBeCanceled)
        {
            cancellationToken.UnsafeRegister(static state => ((DetachedDelivery)state!).CancelHandler(), this);
        }
    }

    /// <inheritdoc />
    public ILeasedMessage Message { get; }

    /// <inheritdoc />
    public MessageLeaseState LeaseState => Volatile.Read(ref _claimed) != 0 ? MessageLeaseState.SettlementClaimed : MessageLeaseState.Held;

    /// <inheritdoc />
    public int RenewalCount => 0;

    /// <inheritdoc />
    public CancellationToken CancellationToken => _handlerCancellation.Token;

    /// <inheritdoc />
    public TimeProvider TimeProvider { get; }

    /// <inheritdoc />
    public bool ShouldYield => _scheduler?.ShouldYield ?? false;

    /// <inheritdoc />
    /// <remarks>A handler's unit test has no pump to count it: nothing happens.</remarks>
    public void HandlerFailed(Exception failure)
    {
    }

    /// <inheritdoc />
    public async Task<bool> SettleAsync(MessageSettlement settlement)
    {
        if (Interlocked.Exchange(ref _claimed, 1) != 0)
        {
            return false;
        }

        try
        {
            await MessageSourceDefaults.SettleAsync(Message, settlement, CancellationToken.None);
            return true;
        }
        catch (LeaseLostException)
        {
            return false;
        }
    }

    private void CancelHandler()
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
}
