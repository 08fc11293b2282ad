namespace PriorityAsync.MessagePump;

public sealed partial class MessageContext
{
    /// <summary>
    /// Gets or sets how many renew calls for this lease are under way (at most
    /// <see cref="PriorityMessagePump.MaxRenewalsInFlight"/>: the renewal and one hedged renewal). Guarded by the pump's lock.
    /// </summary>
    internal int RenewalsInFlight { get; set; }

    /// <summary>Gets or sets when (the pump clock's timestamp) the newest renewal of this lease was sent. Guarded by the pump's lock.</summary>
    internal long LastRenewalSent { get; set; }
}
