namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>
/// The kinds of client operation a fault armed with <see cref="ServiceBusTestFaults.FailNext"/> answers; combine them
/// to let one armed fault answer whichever of them comes first.
/// </summary>
[Flags]
public enum ServiceBusTestOperations
{
    /// <summary>No operation; not accepted by <see cref="ServiceBusTestFaults.FailNext"/>.</summary>
    None = 0,

    /// <summary>A send over a send link: one <c>SendMessageAsync</c> or <c>SendMessagesAsync</c> call (a batch is one transfer, failed whole).</summary>
    Send = 1,

    /// <summary>A receive over a receive link: a link being attached, or an attached link asking for messages (<see cref="ServiceBusTestFaults.FailNextReceives"/>).</summary>
    Receive = 2,

    /// <summary>A complete, over the receive link or <c>$management</c> (<c>update-disposition</c>).</summary>
    Complete = 4,

    /// <summary>An abandon, over the receive link or <c>$management</c>.</summary>
    Abandon = 8,

    /// <summary>A dead-letter, over the receive link or <c>$management</c>.</summary>
    DeadLetter = 16,

    /// <summary>A defer, over the receive link or <c>$management</c>.</summary>
    Defer = 32,

    /// <summary>A message lock renewal (<c>com.microsoft:renew-lock</c>).</summary>
    RenewMessageLock = 64,

    /// <summary>A session lock renewal (<c>com.microsoft:renew-session-lock</c>).</summary>
    RenewSessionLock = 128,

    /// <summary>
    /// Any other <c>$management</c> request: peek, receive of deferred messages (<c>receive-by-sequence-number</c>),
    /// schedule and cancel, get and set session state, and the rule manager's requests.
    /// </summary>
    Management = 256,

    /// <summary>Every settlement: <see cref="Complete"/>, <see cref="Abandon"/>, <see cref="DeadLetter"/> and <see cref="Defer"/>.</summary>
    Settlements = Complete | Abandon | DeadLetter | Defer,

    /// <summary>Both lock renewals: <see cref="RenewMessageLock"/> and <see cref="RenewSessionLock"/> (<see cref="ServiceBusTestFaults.FailNextRenewals"/>).</summary>
    Renewals = RenewMessageLock | RenewSessionLock,
}
