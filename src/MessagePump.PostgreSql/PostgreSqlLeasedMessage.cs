using System.Collections.ObjectModel;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;

namespace PriorityAsync.MessagePump.PostgreSql;

/// <summary>
/// One delivery of a message of a <see cref="PostgreSqlQueue"/>, holding its lock token. Every renew or settle call
/// is one statement guarded by the token and by <c>locked_until</c> on the server's clock: a delivery whose lock
/// expired, or that another delivery replaced, changes nothing and gets <see cref="LeaseLostException"/>.
/// </summary>
/// <remarks>
/// Once a <see cref="PriorityMessagePump"/> has received the delivery, its settle calls go through the pump's settlement,
/// as <see cref="MessageContext.CompleteAsync"/> and its siblings do: the pump counts the settlement as what it was and
/// does not settle the message again when the handler returns.
/// </remarks>
public sealed class PostgreSqlLeasedMessage : ISettleableMessage
{
    private long _lockedUntilTicks;
    private long _serverLockedUntilTicks;
    private ISettlementOwner? _owner;

    internal PostgreSqlLeasedMessage(
        PostgreSqlQueue queue,
        long sequenceNumber,
        string messageId,
        byte[] body,
        DateTimeOffset enqueuedAt,
        int deliveryCount,
        Guid lockToken,
        DateTimeOffset serverLockedUntil,
        DateTimeOffset lockedUntil,
        IReadOnlyDictionary<string, string>? headers = null)
    {
        Queue = queue;
        SequenceNumber = sequenceNumber;
        MessageId = messageId;
        Body = body;
        Headers = headers ?? ReadOnlyDictionary<string, string>.Empty;
        EnqueuedAt = enqueuedAt;
        DeliveryCount = deliveryCount;
        LockToken = lockToken;
        SetLockedUntil(serverLockedUntil, lockedUntil);
    }

    /// <summary>Gets the queue the message was received from.</summary>
    internal PostgreSqlQueue Queue { get; }

    /// <summary>Gets the row's identifier in <c>priorityasync.messages</c> (the queue's order).</summary>
    public long SequenceNumber { get; }

    /// <inheritdoc />
    public string MessageId { get; }

    /// <inheritdoc />
    public ReadOnlyMemory<byte> Body { get; }

    /// <inheritdoc />
    /// <remarks>Stored in the <c>headers</c> column (<c>jsonb</c>, NULL for none).</remarks>
    public IReadOnlyDictionary<string, string> Headers { get; }

    /// <summary>Gets when the message was sent, on the server's clock.</summary>
    public DateTimeOffset EnqueuedAt { get; }

    /// <inheritdoc />
    public int DeliveryCount { get; }

    /// <summary>Gets this delivery's lock token (the fencing token); a redelivery gets a fresh one.</summary>
    public Guid LockToken { get; }

    /// <summary>
    /// Gets when the lease expires unless renewed, on the local clock: the lock time the server reported left, counted
    /// from when the request was sent (so it errs early, and clock skew between client and server does not matter).
    /// </summary>
    public DateTimeOffset LockedUntil => new(Volatile.Read(ref _lockedUntilTicks), TimeSpan.Zero);

    /// <summary>Gets <c>locked_until</c> as stored, on the server's clock.</summary>
    internal DateTimeOffset ServerLockedUntil => new(Volatile.Read(ref _serverLockedUntilTicks), TimeSpan.Zero);

    /// <inheritdoc />
    [SuppressMessage("Usage", "VSTHRD103:Call async methods when in an async method", Justification = "The reader is opened without SequentialAccess, so ReadAsync has buffered the whole row: the getters only decode memory and never wait on the network (as GetInt32/GetString, which have no async form, already do).")]
    public async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
    {
        var sentAt = TimeProvider.System.GetUtcNow();
        var renewed = await Queue.Transport.ExecuteAsync(
            $"Renewing the lock of {this}",
            Sql.Renew,
            Bind,
            static async (reader, ct) => await reader.ReadAsync(ct).ConfigureAwait(false)
                ? (Found: true, Server: reader.GetFieldValue<DateTimeOffset>(0), Remaining: reader.GetFieldValue<TimeSpan>(1))
                : default,
            cancellationToken).ConfigureAwait(false);
        if (!renewed.Found)
        {
            throw LeaseLost("renew", cancellationToken);
        }

        var lockedUntil = sentAt + renewed.Remaining;
        SetLockedUntil(renewed.Server, lockedUntil);
        return lockedUntil;
    }

    /// <inheritdoc />
    public Task CompleteAsync(CancellationToken cancellationToken = default) => RouteAsync(MessageSettlement.Complete, cancellationToken);

    /// <inheritdoc />
    public Task AbandonAsync(CancellationToken cancellationToken = default) => RouteAsync(MessageSettlement.Abandon(), cancellationToken);

    /// <inheritdoc />
    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        return RouteAsync(MessageSettlement.DeadLetter(reason), cancellationToken);
    }

    /// <inheritdoc />
    void ISettleableMessage.RouteSettlementsThrough(ISettlementOwner owner)
    {
        ArgumentNullException.ThrowIfNull(owner);
        var previous = Interlocked.Exchange(ref _owner, owner);
        Debug.Assert(previous is null, "A delivery is owned by one pump.");
    }

    /// <inheritdoc />
    /// <remarks>
    /// The queue keeps no dead-letter description (it is dropped) and has no defer (<see cref="NotSupportedException"/>);
    /// it takes no transport data (<see cref="ArgumentException"/>). Every answer is confirmed: a settlement is one
    /// statement that reports the row it changed.
    /// </remarks>
    public async Task<SettlementOutcome> SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(settlement);
        if (settlement.TransportData is not null)
        {
            throw new ArgumentException("The PostgreSQL queue takes no transport data with a settlement.", nameof(settlement));
        }

        await (settlement.Kind switch
        {
            SettlementKind.Complete => CompleteDirectAsync(cancellationToken),
            SettlementKind.Abandon => AbandonDirectAsync(cancellationToken),
            SettlementKind.DeadLetter => DeadLetterDirectAsync(settlement.Reason ?? "DeadLettered", cancellationToken),
            _ => throw new NotSupportedException("The PostgreSQL queue has no defer."),
        }).ConfigureAwait(false);
        return SettlementOutcome.Confirmed;
    }

    /// <summary>A public settle call: through the pump that owns the delivery, or straight to the database.</summary>
    private Task RouteAsync(MessageSettlement settlement, CancellationToken cancellationToken) =>
        Volatile.Read(ref _owner) is { } owner ? owner.SettleAsync(settlement, cancellationToken) : SettleAsync(settlement, cancellationToken);

    private async Task CompleteDirectAsync(CancellationToken cancellationToken)
    {
        var rows = await Queue.Transport.ExecuteNonQueryAsync($"Completing {this}", Sql.Complete, Bind, cancellationToken).ConfigureAwait(false);
        if (rows != 1)
        {
            throw LeaseLost("complete", cancellationToken);
        }
    }

    private async Task AbandonDirectAsync(CancellationToken cancellationToken)
    {
        var rows = await Queue.Transport.ExecuteAsync(
            $"Abandoning {this}",
            Sql.Abandon,
            command =>
            {
                Bind(command);
                command.Parameters.Add(new NpgsqlParameter<string>("queue", Queue.Name));
            },
            static async (reader, ct) => await reader.ReadAsync(ct).ConfigureAwait(false) ? reader.GetInt64(0) : 0,
            cancellationToken).ConfigureAwait(false);
        if (rows != 1)
        {
            throw LeaseLost("abandon", cancellationToken);
        }
    }

    private async Task DeadLetterDirectAsync(string reason, CancellationToken cancellationToken)
    {
        var rows = await Queue.Transport.ExecuteNonQueryAsync(
            $"Dead-lettering {this}",
            Sql.DeadLetter,
            command =>
            {
                Bind(command);
                command.Parameters.Add(new NpgsqlParameter<string>("reason", reason));
            },
            cancellationToken).ConfigureAwait(false);
        if (rows != 1)
        {
            throw LeaseLost("dead-letter", cancellationToken);
        }
    }

    /// <inheritdoc />
    public override string ToString() => $"{MessageId} of {Queue} (delivery {DeliveryCount}, lock {LockToken})";

    private void Bind(NpgsqlCommand command)
    {
        command.Parameters.Add(new NpgsqlParameter<long>("id", SequenceNumber));
        command.Parameters.Add(new NpgsqlParameter<Guid>("token", LockToken));
    }

    /// <summary>Records a lock expiry; the latest wins, so an older answer that arrives late (a hedged renewal's sibling) never shortens it.</summary>
    internal void SetLockedUntil(DateTimeOffset server, DateTimeOffset local)
    {
        RaiseTo(ref _serverLockedUntilTicks, server.UtcTicks);
        RaiseTo(ref _lockedUntilTicks, local.UtcTicks);
    }

    private static void RaiseTo(ref long ticks, long value)
    {
        var known = Volatile.Read(ref ticks);
        while (value > known && Interlocked.CompareExchange(ref ticks, value, known) is var seen && seen != known)
        {
            known = seen;
        }
    }

    /// <summary>
    /// The exception for a statement that matched no row: <see cref="LeaseLostException"/>, or, when the caller canceled
    /// meanwhile, <see cref="OperationCanceledException"/>. A caller that cancels a renewal because it is settling the
    /// message (as the pump does) races the settlement: the renewal then finds the row gone, which is no lost lease.
    /// </summary>
    internal Exception LeaseLost(string operation, CancellationToken cancellationToken) => cancellationToken.IsCancellationRequested
        ? new OperationCanceledException($"The {operation} of {this} was canceled; it matched no row.", cancellationToken)
        : new LeaseLostException($"Cannot {operation} {this}: the lock expired on the server's clock, the message was settled, or it was delivered again under a newer lock token.");
}
