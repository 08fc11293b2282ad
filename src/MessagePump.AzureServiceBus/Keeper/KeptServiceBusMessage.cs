using System.Diagnostics;
using System.Reflection;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// A Service Bus message that the user's own code received (a <see cref="ServiceBusProcessor"/>'s handler, a
/// <see cref="ServiceBusSessionProcessor"/>'s, or a <see cref="ServiceBusReceiver"/> loop) as a <see cref="LeaseKeeper"/>
/// keeps it: renewal and settlement go through the SDK object that holds the lock, each failure mapped once
/// (<see cref="ServiceBusErrors"/>). A renewal refused because the user's code settled the message through a
/// processor's args (<c>args.CompleteMessageAsync</c>, which marks the SDK's message settled) releases the handle before
/// the refusal is answered, so the keeper does not count it as a lost lock. The SDK marks it only once the broker has
/// answered the settlement, and the refusal can come first: such a refusal waits a grace
/// (<see cref="SettlementGrace"/>) for the settlement's answer before it is reported as a lost lock.
/// </summary>
internal abstract class KeptServiceBusMessage : ILeasedMessage
{
    private static readonly Func<ServiceBusReceivedMessage, bool>? SdkIsSettled = ReadSdkIsSettled();
    private LeaseHandle? _handle;
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

    /// <summary>Gets whether the SDK can tell this process settled a message (its internal <c>IsSettled</c>, read by reflection; see <see cref="IsSettledBySdk"/>).</summary>
    internal static bool CanSeeSdkSettlement => SdkIsSettled is not null;

    /// <summary>
    /// The least a refusal of a message settled through a processor's args waits for the SDK to mark the settlement
    /// (<see cref="SettlementGrace"/>): before the keeper has measured a renew round trip, and a floor for the time the
    /// SDK's answer takes to run on a busy pool.
    /// </summary>
    internal static readonly TimeSpan MinSettlementGrace = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Gets whether the user's code can settle this message through SDK calls that mark it settled once answered (a
    /// processor's args): only then can a renewal be refused because of a settlement this process has under way. A
    /// session's renewal renews the session lock, which settling one message does not end; a receiver marks nothing.
    /// </summary>
    protected virtual bool SettlesThroughArgs => false;

    /// <summary>What the lock is called in messages: "the lock of message 7" or "the lock of session 'a'".</summary>
    protected abstract string LockName { get; }

    /// <summary>
    /// Gets whether the SDK has settled <paramref name="message"/> through a processor's event args of this process (7.21
    /// sets the flag there only, once the broker answered; a <see cref="ServiceBusReceiver"/> does not). Read from the SDK's
    /// internal <c>ServiceBusReceivedMessage.IsSettled</c> (the flag its processor checks before auto-completing), since
    /// the SDK has no public one; <see langword="false"/> if a later SDK drops it (a renewal
    /// refused after such a settlement is then reported as a lost lock: the safe side).
    /// </summary>
    internal static bool IsSettledBySdk(ServiceBusReceivedMessage message) => SdkIsSettled?.Invoke(message) ?? false;

    /// <summary>
    /// Ties the adapter to its newest handle (right after <see cref="LeaseKeeper.Keep"/>; a message kept again after its
    /// handle was released gets a new one), so a settlement seen at a refused renewal releases it; and to the lock
    /// duration hint the keeper was given with it (if any), which learns the entity's lock duration from each renewal.
    /// </summary>
    internal void Attach(LeaseHandle handle, LockDurationHint? hint)
    {
        Debug.Assert(ReferenceEquals(handle.Message, this), "The handle keeps this adapter.");
        Volatile.Write(ref _hint, hint);
        Volatile.Write(ref _handle, handle);
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
            if (translated is LeaseLostException && await IsSettledByUserAsync(cancellationToken).ConfigureAwait(false))
            {
                // The user's code settled the message through the SDK while the handle was kept: the refusal is the
                // settlement's, not a lost lock. Releasing first makes the keeper treat the answer as after a release.
                Volatile.Read(ref _handle)?.Dispose();
            }

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

    /// <summary>
    /// How long a refused renewal waits for a settlement under way to be marked (see <see cref="IsSettledByUserAsync"/>):
    /// the keeper's worst recent renew round trip, at least <see cref="MinSettlementGrace"/>, and never past the lock's
    /// known expiry. The broker refused because it handled the settlement first; the settlement's answer is then at most
    /// about one way back behind the refusal's, and a renew round trip as the keeper measured it (until its own await
    /// resumed) covers a way back and the wait for a pool thread that a busy pool adds to every SDK answer. Past the
    /// known expiry the lock is gone whatever the answer: waiting longer would only tell the handler later.
    /// </summary>
    internal static TimeSpan SettlementGrace(TimeSpan worstRoundTrip, TimeSpan lockLeft)
    {
        var grace = worstRoundTrip > MinSettlementGrace ? worstRoundTrip : MinSettlementGrace;
        return lockLeft < grace ? lockLeft : grace;
    }

    /// <summary>Renews the lock through the SDK and returns the new expiry.</summary>
    protected abstract Task<DateTimeOffset> RenewCoreAsync(CancellationToken cancellationToken);

    /// <summary>Completes the message through the SDK.</summary>
    protected abstract Task CompleteCoreAsync(CancellationToken cancellationToken);

    /// <summary>Abandons the message through the SDK.</summary>
    protected abstract Task AbandonCoreAsync(CancellationToken cancellationToken);

    /// <summary>Dead-letters the message through the SDK.</summary>
    protected abstract Task DeadLetterCoreAsync(string reason, string? description, CancellationToken cancellationToken);

    /// <summary>
    /// Whether a renewal refusal is a settlement of the user's own: the SDK marked the message settled, or — where the
    /// user settles through a processor's args, which mark it only once the broker answered — marks it within
    /// <see cref="SettlementGrace"/>. A real loss is reported that much later; a lock already past its known expiry, or
    /// a handle no longer kept, does not wait.
    /// </summary>
    private async Task<bool> IsSettledByUserAsync(CancellationToken cancellationToken)
    {
        if (IsSettledBySdk(Message))
        {
            return true;
        }

        if (!SettlesThroughArgs || !CanSeeSdkSettlement || Volatile.Read(ref _handle) is not { IsKept: true } handle)
        {
            return false;
        }

        var keeper = handle.Keeper;
        var grace = SettlementGrace(keeper.WorstRenewRoundTrip, LockedUntil - keeper.TimeProvider.GetUtcNow());
        if (grace <= TimeSpan.Zero)
        {
            return false;
        }

        await Task.Delay(grace, keeper.TimeProvider, cancellationToken).ConfigureAwait(false);
        return IsSettledBySdk(Message);
    }

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

    private static Func<ServiceBusReceivedMessage, bool>? ReadSdkIsSettled()
    {
        var property = typeof(ServiceBusReceivedMessage).GetProperty("IsSettled", BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public);
        return property?.GetMethod is { } getter && property.PropertyType == typeof(bool)
            ? getter.CreateDelegate<Func<ServiceBusReceivedMessage, bool>>()
            : null;
    }
}
