namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>The settlements a receiver can ask for.</summary>
internal enum SettleKind
{
    Complete,
    Abandon,
    DeadLetter,
    Defer,
}
