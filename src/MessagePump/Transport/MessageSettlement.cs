namespace PriorityAsync.MessagePump;

/// <summary>
/// How to settle a leased message, as a value: its kind, the dead-letter reason and description, and a transport's own
/// data (Service Bus: the <c>propertiesToModify</c> an abandon, dead-letter or defer sends). A pump settles every
/// message of an <see cref="ISettleableMessage"/> transport with one of these, so a transport written outside this
/// repository settles everything a shipped one does.
/// </summary>
/// <remarks>Immutable; <see cref="Complete"/> and the no-data abandon and defer are shared instances.</remarks>
public sealed class MessageSettlement
{
    private static readonly MessageSettlement s_abandon = new(SettlementKind.Abandon, reason: null, description: null, transportData: null);
    private static readonly MessageSettlement s_defer = new(SettlementKind.Defer, reason: null, description: null, transportData: null);

    private MessageSettlement(SettlementKind kind, string? reason, string? description, object? transportData)
    {
        Kind = kind;
        Reason = reason;
        Description = description;
        TransportData = transportData;
    }

    /// <summary>Gets the settlement that removes the message: it was processed.</summary>
    public static MessageSettlement Complete { get; } = new(SettlementKind.Complete, reason: null, description: null, transportData: null);

    /// <summary>Gets what the settlement does.</summary>
    public SettlementKind Kind { get; }

    /// <summary>
    /// Gets the dead-letter reason (<see cref="SettlementKind.DeadLetter"/> only), or <see langword="null"/>: none for the
    /// other kinds, and for a dead-letter whose reason the transport's data carries (Service Bus: a
    /// <c>DeadLetterReason</c> in <c>propertiesToModify</c>) or that leaves it to the broker.
    /// </summary>
    public string? Reason { get; }

    /// <summary>Gets the dead-letter description (<see cref="SettlementKind.DeadLetter"/> only), or <see langword="null"/> for none.</summary>
    public string? Description { get; }

    /// <summary>
    /// Gets the transport's own data for this settlement, or <see langword="null"/> for none. What it may be is the
    /// transport's contract (Service Bus: an <c>IDictionary&lt;string, object&gt;</c> of properties to modify); a
    /// transport refuses data it does not know with <see cref="ArgumentException"/> rather than dropping it.
    /// </summary>
    public object? TransportData { get; }

    /// <summary>Creates an abandon: the lease is released and the message becomes visible again for another delivery.</summary>
    /// <param name="transportData">The transport's own data (see <see cref="TransportData"/>); <see langword="null"/> for none.</param>
    /// <returns>The settlement.</returns>
    public static MessageSettlement Abandon(object? transportData = null) =>
        transportData is null ? s_abandon : new(SettlementKind.Abandon, reason: null, description: null, transportData);

    /// <summary>Creates a dead-letter: the message moves to the dead-letter queue and is not delivered again.</summary>
    /// <param name="reason">Why the message cannot be processed; <see langword="null"/> only when <paramref name="transportData"/> carries it or the broker's default is wanted.</param>
    /// <param name="description">More detail, where the broker carries it; <see langword="null"/> for none.</param>
    /// <param name="transportData">The transport's own data (see <see cref="TransportData"/>); <see langword="null"/> for none.</param>
    /// <returns>The settlement.</returns>
    /// <exception cref="ArgumentException"><paramref name="reason"/> is empty or white space (give <see langword="null"/> for no reason).</exception>
    public static MessageSettlement DeadLetter(string? reason, string? description = null, object? transportData = null)
    {
        if (reason is not null && string.IsNullOrWhiteSpace(reason))
        {
            throw new ArgumentException("A dead-letter reason must not be empty or white space; give null for no reason.", nameof(reason));
        }

        return new(SettlementKind.DeadLetter, reason, description, transportData);
    }

    /// <summary>
    /// Creates a defer: the broker sets the message aside, to be received again only by its sequence number (Service
    /// Bus's defer). A transport without one refuses it with <see cref="NotSupportedException"/>.
    /// </summary>
    /// <param name="transportData">The transport's own data (see <see cref="TransportData"/>); <see langword="null"/> for none.</param>
    /// <returns>The settlement.</returns>
    public static MessageSettlement Defer(object? transportData = null) =>
        transportData is null ? s_defer : new(SettlementKind.Defer, reason: null, description: null, transportData);

    /// <summary>Gets the settlement's operation name as logs and spans write it: <c>complete</c>, <c>abandon</c>, <c>dead-letter</c> or <c>defer</c>.</summary>
    /// <returns>The name.</returns>
    public override string ToString() => Kind switch
    {
        SettlementKind.Complete => "complete",
        SettlementKind.Abandon => "abandon",
        SettlementKind.Defer => "defer",
        _ => "dead-letter",
    };
}
