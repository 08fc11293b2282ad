namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Live;

/// <summary>
/// A test of the opt-in live run: it runs when <c>PRIORITYASYNC_SERVICEBUS</c> holds a connection string (a real
/// namespace, or the official emulator), and is otherwise skipped with the reason. The queue is
/// <c>PRIORITYASYNC_SERVICEBUS_QUEUE</c> (default <c>priorityasync-e2e</c>): it must exist, without sessions, and the
/// tests empty it first.
/// </summary>
public sealed class LiveServiceBusFactAttribute : FactAttribute
{
    /// <summary>The variable holding the connection string.</summary>
    public const string ConnectionStringVariable = "PRIORITYASYNC_SERVICEBUS";

    /// <summary>The variable naming the queue.</summary>
    public const string QueueVariable = "PRIORITYASYNC_SERVICEBUS_QUEUE";

    /// <summary>Sets <see cref="FactAttribute.Skip"/> when no namespace is configured.</summary>
    public LiveServiceBusFactAttribute()
    {
        if (string.IsNullOrWhiteSpace(ConnectionString))
        {
            Skip = $"Opt-in live run: set {ConnectionStringVariable} to a Service Bus connection string (a namespace, or the emulator) and {QueueVariable} to an existing queue without sessions (default priorityasync-e2e). The same flows run against the test broker in EndToEnd/ on every build.";
        }
    }

    public static string? ConnectionString => Environment.GetEnvironmentVariable(ConnectionStringVariable);

    public static string QueueName => Environment.GetEnvironmentVariable(QueueVariable) is { Length: > 0 } name ? name : "priorityasync-e2e";
}
