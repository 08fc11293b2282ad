namespace PriorityAsync.MessagePump;

/// <summary>The state of the lease on a message in a <see cref="PriorityMessagePump"/>.</summary>
public enum MessageLeaseState
{
    /// <summary>The pump holds the lease and renews it.</summary>
    Held,

    /// <summary>A settlement was claimed: the message is being settled or was settled (completed, abandoned or dead-lettered); the handler's result no longer matters.</summary>
    SettlementClaimed,

    /// <summary>The lease was lost; the handler's token is canceled and the message will not be completed by this delivery.</summary>
    Lost,
}
