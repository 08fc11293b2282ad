namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>The holder of messages received over $management (deferred messages received by sequence number).</summary>
internal sealed class ManagementConsumer : IConsumer
{
    private ManagementConsumer(bool receiveAndDelete) => ReceiveAndDelete = receiveAndDelete;

    public static ManagementConsumer PeekLockInstance { get; } = new(receiveAndDelete: false);

    public static ManagementConsumer ReceiveAndDeleteInstance { get; } = new(receiveAndDelete: true);

    public string? SessionId => null;

    public bool ReceiveAndDelete { get; }

    public int Credit
    {
        get => 0;
        set { }
    }

    public string? LinkName => null;

    public bool IsClosed => false;
}
