namespace PriorityAsync.MessagePump;

/// <summary>
/// Implemented by a leased message that must know when the pump is done with it: told once, after the handler has
/// returned (or was skipped because the lease was lost before it started) and the settlement, if any, has ended;
/// whether the lease was kept or lost. A Service Bus session uses it so that a re-accepted session waits for the
/// handler of its earlier acceptance.
/// </summary>
internal interface IHandlerEndListener
{
    /// <summary>The pump's processing of this delivery is over: no handler of it runs any more.</summary>
    void OnHandlerEnded();
}
