using System.Runtime.CompilerServices;
using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// Keeps the locks of Service Bus messages that your own code received — in a <see cref="ServiceBusProcessor"/>'s or a
/// <see cref="ServiceBusSessionProcessor"/>'s handler, or from a <see cref="ServiceBusReceiver"/> loop — with a
/// <see cref="LeaseKeeper"/>: the keeper renews them in its scheduler's lease lane, not from a delay loop on the thread
/// pool, so CPU-heavy handlers and a starved pool do not make the renewals late. See <c>docs/keep-your-servicebusprocessor.md</c>.
/// </summary>
/// <remarks>
/// <para>
/// Dispose the handle (<c>using var lease = keeper.Keep(args, processor);</c>) when the handler is done; pass
/// <see cref="LeaseHandle.LeaseLostToken"/> to the work, which a lost lock cancels. A renewal the broker refuses
/// because the message was settled through the handle (<see cref="LeaseHandle.CompleteAsync"/>, which stops renewing
/// before the call is sent), or by the processor's auto-complete after the handle was disposed, is not a lost lock. The
/// SDK has no public "settled" state, so a settlement through the processor's args or the receiver while the handle is
/// still kept is not seen: a renewal it makes the broker refuse is reported as a lost lock. Settle through the handle,
/// or dispose it before settling through the args or the receiver.
/// </para>
/// <para>
/// A processor must not renew the locks itself: its own renewal (<see cref="ServiceBusProcessorOptions.MaxAutoLockRenewalDuration"/>,
/// 5 minutes by default) runs from the thread pool beside the keeper's, and on a starved pool it is late, then gives up
/// the lock by canceling its token. The overloads that take a processor check that its <c>MaxAutoLockRenewalDuration</c>
/// is <see cref="TimeSpan.Zero"/> and throw <see cref="ArgumentException"/> otherwise.
/// </para>
/// </remarks>
public static class ServiceBusLeaseKeeperExtensions
{
    private static readonly ConditionalWeakTable<ServiceBusReceivedMessage, KeptServiceBusMessage> Adapters = new();

    /// <summary>Keeps the lock of the message a <see cref="ServiceBusProcessor"/> handed to its handler, renewing it through <paramref name="args"/>.</summary>
    /// <param name="keeper">The keeper.</param>
    /// <param name="args">The handler's arguments; the lock is renewed with <see cref="ProcessMessageEventArgs.RenewMessageLockAsync"/>.</param>
    /// <param name="processor">The processor that called the handler, to check that its own lock renewal is off.</param>
    /// <returns>The lease's handle: dispose it when the handler ends; settle through it, or through <paramref name="args"/> once it is disposed.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="keeper"/>, <paramref name="args"/> or <paramref name="processor"/> is null.</exception>
    /// <exception cref="ArgumentException">
    /// <paramref name="processor"/>'s <see cref="ServiceBusProcessor.MaxAutoLockRenewalDuration"/> is not zero (it would
    /// renew the lock itself, racing the keeper), or the message's lock has expired already.
    /// </exception>
    /// <exception cref="InvalidOperationException">The message is kept already, or the keeper's scheduler is shutting down.</exception>
    /// <exception cref="ObjectDisposedException">The keeper has stopped.</exception>
    public static LeaseHandle Keep(this LeaseKeeper keeper, ProcessMessageEventArgs args, ServiceBusProcessor processor)
    {
        ArgumentNullException.ThrowIfNull(keeper);
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(processor);
        ThrowIfRenewsItself(processor.MaxAutoLockRenewalDuration, $"The {nameof(ServiceBusProcessor)} of '{processor.EntityPath}'", nameof(processor));
        return Keep(keeper, args.Message, static args => new KeptProcessorMessage(args), args);
    }

    /// <summary>
    /// Keeps the session lock of the message a <see cref="ServiceBusSessionProcessor"/> handed to its handler, renewing it
    /// through <paramref name="args"/> (<see cref="ProcessSessionMessageEventArgs.RenewSessionLockAsync"/>); the lease's
    /// expiry is <see cref="ProcessSessionMessageEventArgs.SessionLockedUntil"/>.
    /// </summary>
    /// <param name="keeper">The keeper.</param>
    /// <param name="args">The handler's arguments.</param>
    /// <param name="processor">The session processor that called the handler, to check that its own lock renewal is off.</param>
    /// <returns>The lease's handle: dispose it when the handler ends. A lost session lock cancels its token.</returns>
    /// <remarks>
    /// The session lock is kept while the handle is: between two handler calls, with its own renewal off, the processor
    /// does not renew it, so a session that waits longer than its lock for its next message is closed and accepted again.
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="keeper"/>, <paramref name="args"/> or <paramref name="processor"/> is null.</exception>
    /// <exception cref="ArgumentException">
    /// <paramref name="processor"/>'s <see cref="ServiceBusSessionProcessor.MaxAutoLockRenewalDuration"/> is not zero, or
    /// the session's lock has expired already.
    /// </exception>
    /// <exception cref="InvalidOperationException">The message is kept already, or the keeper's scheduler is shutting down.</exception>
    /// <exception cref="ObjectDisposedException">The keeper has stopped.</exception>
    public static LeaseHandle Keep(this LeaseKeeper keeper, ProcessSessionMessageEventArgs args, ServiceBusSessionProcessor processor)
    {
        ArgumentNullException.ThrowIfNull(keeper);
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(processor);
        ThrowIfRenewsItself(processor.MaxAutoLockRenewalDuration, $"The {nameof(ServiceBusSessionProcessor)} of '{processor.EntityPath}'", nameof(processor));
        return Keep(keeper, args.Message, static args => new KeptSessionMessage(args), args);
    }

    /// <summary>Keeps the lock of a message your own loop received from <paramref name="receiver"/>, renewing it through that receiver.</summary>
    /// <param name="keeper">The keeper.</param>
    /// <param name="receiver">The receiver that received <paramref name="message"/> in peek-lock mode (not a session receiver).</param>
    /// <param name="message">The message.</param>
    /// <returns>The lease's handle: dispose it before settling through the receiver, or settle through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="keeper"/>, <paramref name="receiver"/> or <paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException">
    /// <paramref name="receiver"/> receives in <see cref="ServiceBusReceiveMode.ReceiveAndDelete"/> mode (nothing is
    /// locked) or is a <see cref="ServiceBusSessionReceiver"/> (its messages are locked by the session), or the
    /// message's lock has expired already.
    /// </exception>
    /// <exception cref="InvalidOperationException">The message is kept already, or the keeper's scheduler is shutting down.</exception>
    /// <exception cref="ObjectDisposedException">The keeper has stopped.</exception>
    public static LeaseHandle Keep(this LeaseKeeper keeper, ServiceBusReceiver receiver, ServiceBusReceivedMessage message)
    {
        ArgumentNullException.ThrowIfNull(keeper);
        ArgumentNullException.ThrowIfNull(receiver);
        ArgumentNullException.ThrowIfNull(message);
        if (receiver.ReceiveMode != ServiceBusReceiveMode.PeekLock)
        {
            throw new ArgumentException($"The receiver of '{receiver.EntityPath}' receives in {receiver.ReceiveMode} mode: its messages hold no lock to keep. Receive in PeekLock mode.", nameof(receiver));
        }

        if (receiver is ServiceBusSessionReceiver session)
        {
            throw new ArgumentException($"The receiver of '{receiver.EntityPath}' is a session receiver (session '{session.SessionId}'): its messages are locked by the session, which a message's lock renewal does not renew.", nameof(receiver));
        }

        return Keep(keeper, message, static state => new KeptReceiverMessage(state.receiver, state.message), (receiver, message));
    }

    /// <summary>Keeps the adapter <paramref name="create"/> makes for <paramref name="message"/> (one per SDK message), with a lock duration hint learnt from its renewals.</summary>
    internal static LeaseHandle Keep<TState>(LeaseKeeper keeper, ServiceBusReceivedMessage message, Func<TState, KeptServiceBusMessage> create, TState state)
    {
        // One adapter per SDK message, so that the keeper sees the same message kept twice (it compares references).
        var kept = Adapters.GetValue(message, _ => create(state));

        // The SDK's consumers do not say the entity's lock duration; the lock left now is at most that, so the keeper
        // may send each renewal before the last is answered (a starved pool delays answers) without overrunning it. The
        // hint learns the real duration from the renewals' answers (see LockDurationHint).
        var lockLeft = kept.LockedUntil - keeper.TimeProvider.GetUtcNow();
        var hint = lockLeft > TimeSpan.Zero ? new LockDurationHint(lockLeft, keeper.TimeProvider) : null;
        LeaseHandle handle;
        try
        {
            handle = hint is not null ? keeper.Keep(kept, hint) : keeper.Keep(kept);
        }
        catch (ArgumentException ex) when (string.Equals(ex.ParamName, "source", StringComparison.Ordinal))
        {
            // The keeper's renewal buffer is not below the lock left: it renews each answer in turn instead.
            handle = keeper.Keep(kept);
            hint = null;
        }

        kept.Attach(handle, hint);
        return handle;
    }

    private static void ThrowIfRenewsItself(TimeSpan maxAutoLockRenewalDuration, string processor, string paramName)
    {
        if (maxAutoLockRenewalDuration != TimeSpan.Zero)
        {
            throw new ArgumentException(
                $"{processor} renews locks itself (MaxAutoLockRenewalDuration is {maxAutoLockRenewalDuration}): its renewal loop on the thread pool would race the keeper's. Set MaxAutoLockRenewalDuration = TimeSpan.Zero in its options and let the keeper renew.",
                paramName);
        }
    }
}
