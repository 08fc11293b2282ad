using System.Diagnostics;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// A Service Bus message that the user's own code received (a <see cref="ServiceBusProcessor"/>'s handler, a
/// <see cref="ServiceBusSessionProcessor"/>'s, or a <see cref="ServiceBusReceiver"/> loop) as a <see cref="LeaseKeeper"/>
/// keeps it: renewal and settlement go through the SDK object that holds the lock, each failure mapped once
/// (<see cref="ServiceBusErrors"/>). The keeper tells a settlement from a lost lock only for settlements it sees: through
/// the handle (<see cref="LeaseHandle.CompleteAsync"/>, which releases it before the call is sent), or after the handle
/// was disposed (a processor's auto-complete). The SDK has no public "settled" state of a message or of a processor's
/// args, so a renewal refused because the user's code settled the message through the args or the receiver while the
/// handle was still kept is reported as a lost lock: the safe side.
/// </summary>
internal abstract class KeptServiceBusMessage : ILeasedMessage
{
    private LockDurationHint? _hint;
    private long _knownLockedUntilTicks;

    protected KeptServiceBusMessage(ServiceBusReceivedMessage message) => Message = message;

    /// <summary>Gets the SDK's message.</summary>
    public ServiceBusReceivedMessage Message { get; }

    /// <inheritdoc />
    public string MessageId => Message.MessageId;

    /// <inheritdoc />
    public ReadOnlyMemory<byte> Body => Message.Body.ToMemory();

    /// <inheritdoc />
    public int DeliveryCount => Message.DeliveryCount;

    /// <inheritdoc />
    /// <remarks>The later of the SDK's expiry and the latest renewal answered: renewals may be hedged, and an older answer must not shorten it.</remarks>
    public DateTimeOffset LockedUntil
    {
        get
        {
            var sdk = SdkLockedUntil;
            var known = Volatile.Read(ref _knownLockedUntilTicks);
            return sdk.UtcTicks >= known ? sdk : new DateTimeOffset(known, TimeSpan.Zero);
        }
    }

    /// <summary>Gets the expiry the SDK holds for the lock (the message's, or the session's).</summary>
    protected abstract DateTimeOffset SdkLockedUntil { get; }

    /// <summary>What the lock is called in messages: "the lock of message 7" or "the lock of session 'a'".</summary>
    protected abstract string LockName { get; }

    /// <summary>
    /// Ties the adapter to the lock duration hint the keeper was given with its newest handle (right after
    /// <see cref="LeaseKeeper.Keep"/>; a message kept again after its handle was released gets a new one), if any: the
    /// hint learns the entity's lock duration from each renewal.
    /// </summary>
    internal void Attach(LeaseHandle handle, LockDurationHint? hint)
    {
        Debug.Assert(ReferenceEquals(handle.Message, this), "The handle keeps this adapter.");
        Volatile.Write(ref _hint, hint);
    }

    /// <inheritdoc />
    public async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            var hint = Volatile.Read(ref _hint);
            var sentAt = hint?.Now ?? default;
            var renewed = await RenewCoreAsync(cancellationToken).ConfigureAwait(false);
            hint?.Learn(sentAt, renewed);
            var known = Volatile.Read(ref _knownLockedUntilTicks);
            while (renewed.UtcTicks > known && Interlocked.CompareExchange(ref _knownLockedUntilTicks, renewed.UtcTicks, known) is var seen && seen != known)
            {
                known = seen;
            }

            return LockedUntil;
        }
        catch (Exception ex) when (ServiceBusErrors.Translate(ex, $"Renewing {LockName}", cancellationToken) is { } translated)
        {
#pragma warning disable MA0027 // not a rethrow: the mapped exception carries ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }
    }

    /// <inheritdoc />
    public Task CompleteAsync(CancellationToken cancellationToken = default) =>
        SettleAsync("complete", static (self, _, ct) => self.CompleteCoreAsync(ct), null, cancellationToken);

    /// <inheritdoc />
    public Task AbandonAsync(CancellationToken cancellationToken = default) =>
        SettleAsync("abandon", static (self, _, ct) => self.AbandonCoreAsync(ct), null, cancellationToken);

    /// <inheritdoc />
    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) =>
        DeadLetterAsync(reason, description: null, cancellationToken);

    /// <inheritdoc />
    public Task DeadLetterAsync(string reason, string? description, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        return SettleAsync("dead-letter", static (self, deadLetter, ct) => self.DeadLetterCoreAsync(deadLetter!.Value.Reason, deadLetter.Value.Description, ct), (reason, description), cancellationToken);
    }

    /// <inheritdoc />
    public override string ToString() => $"message {MessageId} (sequence {Message.SequenceNumber}, delivery {DeliveryCount})";

    /// <summary>Renews the lock through the SDK and returns the new expiry.</summary>
    protected abstract Task<DateTimeOffset> RenewCoreAsync(CancellationToken cancellationToken);

    /// <summary>Completes the message through the SDK.</summary>
    protected abstract Task CompleteCoreAsync(CancellationToken cancellationToken);

    /// <summary>Abandons the message through the SDK.</summary>
    protected abstract Task AbandonCoreAsync(CancellationToken cancellationToken);

    /// <summary>Dead-letters the message through the SDK.</summary>
    protected abstract Task DeadLetterCoreAsync(string reason, string? description, CancellationToken cancellationToken);

    private async Task SettleAsync(string operation, Func<KeptServiceBusMessage, (string Reason, string? Description)?, CancellationToken, Task> settle, (string Reason, string? Description)? deadLetter, CancellationToken cancellationToken)
    {
        try
        {
            await settle(this, deadLetter, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ServiceBusErrors.Translate(ex, $"The {operation} of {this}", cancellationToken) is { } translated)
        {
#pragma warning disable MA0027 // not a rethrow: the mapped exception carries ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }
    }
}
