namespace PriorityAsync.MessagePump;

/// <summary>What the broker said about a settlement it accepted (<see cref="ISettleableMessage.SettleAsync"/>).</summary>
/// <remarks>A settlement the broker refuses is not an outcome: the call throws (<see cref="LeaseLostException"/>, <see cref="TransientTransportException"/>, or the broker's own error).</remarks>
public enum SettlementOutcome
{
    /// <summary>The broker settled the message.</summary>
    Confirmed,

    /// <summary>
    /// The broker accepted the call but cannot say it took effect (Amazon SQS: a delete with a receipt handle that may be
    /// out of date succeeds without deleting), so the message may be delivered again. A pump counts the settlement as
    /// its kind (a complete in <see cref="MessagePumpStatistics.Completed"/>) and also in
    /// <see cref="MessagePumpStatistics.UnconfirmedSettlements"/>.
    /// </summary>
    Unconfirmed,
}
