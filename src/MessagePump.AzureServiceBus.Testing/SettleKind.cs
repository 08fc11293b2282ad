namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>The settlements a receiver can ask for.</summary>
internal enum SettleKind
{
    Complete,
    Abandon,

    /// <summary>The client released a delivery it did not take (AMQP released: not delivered, so not counted).</summary>
    Release,
    DeadLetter,
    Defer,
}
