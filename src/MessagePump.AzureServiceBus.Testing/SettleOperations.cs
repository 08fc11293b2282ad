namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>The fault operation kind of each settlement.</summary>
internal static class SettleOperations
{
    /// <summary>The operation a settlement of <paramref name="kind"/> is; <see cref="ServiceBusTestOperations.None"/> for a release, which no fault answers (the client releases what it did not ask for).</summary>
    public static ServiceBusTestOperations Of(SettleKind kind) => kind switch
    {
        SettleKind.Complete => ServiceBusTestOperations.Complete,
        SettleKind.Abandon => ServiceBusTestOperations.Abandon,
        SettleKind.DeadLetter => ServiceBusTestOperations.DeadLetter,
        SettleKind.Defer => ServiceBusTestOperations.Defer,
        _ => ServiceBusTestOperations.None,
    };
}
