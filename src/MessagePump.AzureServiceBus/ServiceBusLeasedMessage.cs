using System.Collections.ObjectModel;
using System.Diagnostics;
using System.Globalization;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// One peek-locked delivery of a Service Bus message. Renewal calls <see cref="ServiceBusReceiver.RenewMessageLockAsync(ServiceBusReceivedMessage, CancellationToken)"/>
/// (or, for a message of a session, renews the session lock); settlement completes, abandons or dead-letters it
/// through the receiver that received it. Every failure is mapped once: a lost lock (expired, settled, or its receive
/// link detached) is <see cref="LeaseLostException"/>, a transient failure is <see cref="TransientTransportException"/>.
/// </summary>
/// <remarks>
/// A settlement is sent even when <see cref="LockedUntil"/> has passed: that is the expiry of the last renewal
/// answered, and a renewal still unanswered may have moved the broker's lock (on a starved thread pool answers wait
/// hundreds of milliseconds after the broker acted). The broker's answer decides: a lock it no longer holds is
/// <see cref="LeaseLostException"/>. The call ends when the broker answers, when the client's operation timeout
/// (<see cref="ServiceBusRetryOptions.TryTimeout"/>, with its retries) ends it, or when the caller's token is canceled.
/// <para>
/// Once a <see cref="PriorityMessagePump"/> has received the delivery, its settle calls (a handler's
/// <c>((ServiceBusLeasedMessage)context.Message).DeadLetterAsync(reason, description)</c>, say) go through the pump's
/// settlement, as <see cref="MessageContext.DeadLetterAsync(string, string)"/> does: run in the lease lane, counted as
/// what they were, a lost lock counted and logged by the pump, and the message not settled again when the handler
/// returns. The token is then checked before the call; the settlement ends as the pump's own do.
/// </para>
/// </remarks>
public sealed class ServiceBusLeasedMessage : ISettleableMessage, IHandlerEndListener
{
    /// <summary>The application property the SDK writes a producer's W3C trace context into.</summary>
    internal const string DiagnosticIdProperty = "Diagnostic-Id";

    private readonly ServiceBusReceiver _receiver;
    private readonly SessionLock? _session;
    private IReadOnlyDictionary<string, string>? _headers;
    private long _lockedUntilTicks;
    private ISettlementOwner? _owner;

    internal ServiceBusLeasedMessage(ServiceBusReceiver receiver, ServiceBusReceivedMessage message, ServiceBusEntity entity, SessionLock? session = null)
    {
        _receiver = receiver;
        _session = session;
        Message = message;
        Entity = entity;
        Volatile.Write(ref _lockedUntilTicks, message.LockedUntil.UtcTicks);
    }

    /// <summary>Gets the SDK's message, with every property the broker sent.</summary>
    public ServiceBusReceivedMessage Message { get; }

    /// <summary>The lock of the session acceptance the message came with; <see langword="null"/> for a message without a session receiver.</summary>
    internal SessionLock? SessionLock => _session;

    /// <summary>Gets the entity the message was received from.</summary>
    internal ServiceBusEntity Entity { get; }

    /// <inheritdoc />
    public string MessageId => Message.MessageId;

    /// <inheritdoc />
    public ReadOnlyMemory<byte> Body => Message.Body.ToMemory();

    /// <inheritdoc />
    /// <remarks>
    /// The message's application properties, each value written as an invariant-culture string (null values are left
    /// out). The SDK's <c>Diagnostic-Id</c> property (a W3C <c>traceparent</c>) is also given as <c>traceparent</c> when
    /// the message has none, so that the pump's process span links to the producer's.
    /// </remarks>
    public IReadOnlyDictionary<string, string> Headers => _headers ??= ReadHeaders(Message);

    /// <inheritdoc />
    public int DeliveryCount => Message.DeliveryCount;

    /// <summary>Gets the message's sequence number, unique within its entity.</summary>
    internal long SequenceNumber => Message.SequenceNumber;

    /// <summary>Gets the session the message belongs to, or <see langword="null"/> outside sessions.</summary>
    public string? SessionId => _session is null ? null : Message.SessionId;

    /// <inheritdoc />
    /// <remarks>
    /// The broker's expiry of this delivery's lock, as the last renewal answered it. For a message of a session, the
    /// session lock's, as the session's keeper judges it (<see cref="LeaseHandle.HeldUntil"/>): later than the last
    /// answered expiry while a renewal that most likely reached the broker in time is unanswered, so that the pump's
    /// keeper and its hand-off agree with the session's keeper on when the lock runs out.
    /// </remarks>
    public DateTimeOffset LockedUntil => _session?.HeldUntil ?? new DateTimeOffset(Volatile.Read(ref _lockedUntilTicks), TimeSpan.Zero);

    /// <summary>Gets whether the message was completed, abandoned or dead-lettered through this object.</summary>
    internal bool IsSettled => Volatile.Read(ref _settled) != 0;

    private int _settled;

    /// <inheritdoc />
    /// <remarks>
    /// Calls <see cref="ServiceBusReceiver.RenewMessageLockAsync(ServiceBusReceivedMessage, CancellationToken)"/> and reads
    /// the new expiry back from <see cref="ServiceBusReceivedMessage.LockedUntil"/>. For a message of a session it
    /// renews the session lock (Service Bus locks a session's messages with the session).
    /// </remarks>
    public async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfSettled("renew");
        if (_session is not null)
        {
            return await _session.RenewAsync(cancellationToken).ConfigureAwait(false);
        }

        try
        {
            await _receiver.RenewMessageLockAsync(Message, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ServiceBusErrors.Translate(ex, $"Renewing the lock of {this}", cancellationToken) is { } translated)
        {
#pragma warning disable MA0027 // not a rethrow: the mapped exception carries ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }

        // The pump may hedge a renewal: answers can cross, and an older one must not shorten the known expiry.
        var lockedUntil = Message.LockedUntil;
        var known = Volatile.Read(ref _lockedUntilTicks);
        while (lockedUntil.UtcTicks > known && Interlocked.CompareExchange(ref _lockedUntilTicks, lockedUntil.UtcTicks, known) is var seen && seen != known)
        {
            known = seen;
        }

        return lockedUntil;
    }

    /// <inheritdoc />
    public Task CompleteAsync(CancellationToken cancellationToken = default) => RouteAsync(MessageSettlement.Complete, cancellationToken);

    /// <inheritdoc />
    public Task AbandonAsync(CancellationToken cancellationToken = default) => RouteAsync(MessageSettlement.Abandon(), cancellationToken);

    /// <inheritdoc />
    /// <remarks>The dead-letter reason is <paramref name="reason"/>, without a description.</remarks>
    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) =>
        DeadLetterAsync(reason, description: null, cancellationToken);

    /// <summary>Moves the message to the entity's dead-letter queue with a reason and a description.</summary>
    /// <param name="reason">Why the message cannot be processed (the <c>DeadLetterReason</c> property).</param>
    /// <param name="description">More detail (the <c>DeadLetterErrorDescription</c> property); <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the broker has dead-lettered the message.</returns>
    /// <exception cref="ArgumentException"><paramref name="reason"/> is null, empty or white space.</exception>
    /// <exception cref="LeaseLostException">The lock expired or the message was settled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    public Task DeadLetterAsync(string reason, string? description, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        return RouteAsync(MessageSettlement.DeadLetter(reason, description), cancellationToken);
    }

    /// <inheritdoc />
    void ISettleableMessage.RouteSettlementsThrough(ISettlementOwner owner)
    {
        ArgumentNullException.ThrowIfNull(owner);
        var previous = Interlocked.Exchange(ref _owner, owner);
        Debug.Assert(previous is null, "A delivery is owned by one pump.");
    }

    /// <summary>
    /// Settles the message through the receiver that received it, whoever owns the delivery (the pump's way to settle;
    /// a handler settles through the pump's context or the message's own calls). Every kind is offered, defer
    /// included; <see cref="MessageSettlement.TransportData"/>, when given, is the SDK's <c>propertiesToModify</c>, an
    /// <see cref="IDictionary{TKey, TValue}"/> of <see cref="string"/> to <see cref="object"/> sent with an abandon,
    /// dead-letter or defer (a complete carries none).
    /// </summary>
    /// <param name="settlement">How to settle.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns><see cref="SettlementOutcome.Confirmed"/> once the broker has settled the message: Service Bus answers every settlement.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="settlement"/> is null.</exception>
    /// <exception cref="ArgumentException">The transport data is not an <c>IDictionary&lt;string, object&gt;</c>, or is given with a complete.</exception>
    /// <exception cref="LeaseLostException">The lock expired or the message was settled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    public async Task<SettlementOutcome> SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(settlement);
        var properties = settlement.TransportData switch
        {
            null => null,
            IDictionary<string, object> dictionary when settlement.Kind != SettlementKind.Complete => dictionary,
            _ when settlement.Kind == SettlementKind.Complete => throw new ArgumentException("A Service Bus complete carries no properties to modify.", nameof(settlement)),
            var other => throw new ArgumentException($"A Service Bus settlement's transport data is its propertiesToModify, an IDictionary<string, object>; got {other.GetType().Name}.", nameof(settlement)),
        };
        var reason = settlement.Reason;
        var description = settlement.Description;
        await (settlement.Kind switch
        {
            SettlementKind.Complete => SettleAsync("complete", (receiver, message, ct) => receiver.CompleteMessageAsync(message, ct), cancellationToken),
            SettlementKind.Abandon => SettleAsync("abandon", (receiver, message, ct) => receiver.AbandonMessageAsync(message, properties, ct), cancellationToken),
            SettlementKind.Defer => SettleAsync("defer", (receiver, message, ct) => receiver.DeferMessageAsync(message, properties, ct), cancellationToken),
            _ when reason is null => SettleAsync("dead-letter", (receiver, message, ct) => receiver.DeadLetterMessageAsync(message, properties, ct), cancellationToken),
            _ when properties is null => SettleAsync("dead-letter", (receiver, message, ct) => receiver.DeadLetterMessageAsync(message, reason, description, ct), cancellationToken),
            _ => SettleAsync("dead-letter", (receiver, message, ct) => receiver.DeadLetterMessageAsync(message, properties, reason, description, ct), cancellationToken),
        }).ConfigureAwait(false);
        return SettlementOutcome.Confirmed;
    }

    /// <inheritdoc />
    public override string ToString() => _session is null
        ? $"message {MessageId} (sequence {SequenceNumber}, delivery {DeliveryCount}) of the {Entity}"
        : $"message {MessageId} (sequence {SequenceNumber}, delivery {DeliveryCount}) of session '{Message.SessionId}' of the {Entity}";

    /// <summary>The pump is done with this delivery: for a message of a session, a re-acceptance of the session in this process may deliver again.</summary>
    void IHandlerEndListener.OnHandlerEnded() => _session?.Ended(this);

    /// <summary>A public settle call: through the pump that owns the delivery, or straight to the receiver.</summary>
    private Task RouteAsync(MessageSettlement settlement, CancellationToken cancellationToken) =>
        Volatile.Read(ref _owner) is { } owner ? owner.SettleAsync(settlement, cancellationToken) : SettleAsync(settlement, cancellationToken);

    private async Task SettleAsync(string operation, Func<ServiceBusReceiver, ServiceBusReceivedMessage, CancellationToken, Task> settle, CancellationToken cancellationToken)
    {
        try
        {
            await SettleOnceAsync(operation, settle, cancellationToken).ConfigureAwait(false);
        }
        catch (LeaseLostException ex) when (_session is not null)
        {
            // A session's messages share its lock: a settlement that finds the lock gone loses the session. Its caller
            // is done with the message (the pump settles once the handler has returned), so it no longer keeps a
            // re-accepted session waiting.
            _session.MarkLost(ex);
            _session.Ended(this);
            throw;
        }

        Volatile.Write(ref _settled, 1);
        _session?.Settled(this);
    }

    private async Task SettleOnceAsync(string operation, Func<ServiceBusReceiver, ServiceBusReceivedMessage, CancellationToken, Task> settle, CancellationToken cancellationToken)
    {
        ThrowIfSettled(operation);
        _session?.ThrowIfLost(this);

        // Sent whatever LockedUntil says: it is the expiry of the last renewal answered, and a renewal still unanswered
        // (an answer waiting for a thread of a starved pool) may already have moved the broker's lock. The broker
        // decides, and its answer is awaited until it comes or the client's own operation timeout ends the call.
        try
        {
            await settle(_receiver, Message, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ServiceBusErrors.Translate(ex, $"The {operation} of {this}", cancellationToken) is { } translated)
        {
#pragma warning disable MA0027 // not a rethrow: the mapped exception carries ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }
    }

    private void ThrowIfSettled(string operation)
    {
        if (IsSettled)
        {
            throw new LeaseLostException($"Cannot {operation} {this}: it was already settled.");
        }
    }

    private static ReadOnlyDictionary<string, string> ReadHeaders(ServiceBusReceivedMessage message)
    {
        var properties = message.ApplicationProperties;
        if (properties.Count == 0)
        {
            return ReadOnlyDictionary<string, string>.Empty;
        }

        var headers = new Dictionary<string, string>(properties.Count + 1, StringComparer.Ordinal);
        foreach (var (name, value) in properties)
        {
            if (value is not null)
            {
                headers[name] = Convert.ToString(value, CultureInfo.InvariantCulture) ?? string.Empty;
            }
        }

        if (!headers.ContainsKey("traceparent") && headers.TryGetValue(DiagnosticIdProperty, out var diagnosticId))
        {
            headers["traceparent"] = diagnosticId;
        }

        return headers.AsReadOnly();
    }
}
