namespace PriorityAsync.MessagePump;

/// <summary>
/// Implemented by a leased message that must know when the pump is done with it: told once, after the handler has
/// returned (or was skipped because the lease was lost before it started) and the settlement, if any, has ended;
/// whether the lease was kept or lost. A Service Bus session uses it so that a re-accepted session waits for the
/// handler of its earlier acceptance; a transport with ordered groups of its own (sessions, FIFO message groups) uses
/// it to hand a group's next message out only once the last one is done.
/// </summary>
/// <remarks>
/// Called once per delivery, in the pump's processing lane, at the very end of the message's path; it must return
/// quickly and must not throw.
/// </remarks>
public interface IHandlerEndListener
{
    /// <summary>The pump's processing of this delivery is over: no handler of it runs any more.</summary>
    void OnHandlerEnded();
}
