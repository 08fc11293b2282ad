using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

/// <summary>A <see cref="ServiceBusSessionReceiver"/> through its protected constructor, scripted like <see cref="FakeReceiver"/>.</summary>
internal sealed class FakeSessionReceiver : ServiceBusSessionReceiver
{
    private readonly LinkedList<ServiceBusReceivedMessage> _messages = new();

    public FakeSessionReceiver(string sessionId, DateTimeOffset lockedUntil, string entityPath = "orders")
    {
        Id = sessionId;
        LockedUntil = lockedUntil;
        Path = entityPath;
    }

    public string Id { get; }

    public string Path { get; }

    public DateTimeOffset LockedUntil { get; set; }

    public override string SessionId => Id;

    public override DateTimeOffset SessionLockedUntil => LockedUntil;

    public override string EntityPath => Path;

    public override string FullyQualifiedNamespace { get; } = $"fake-{Guid.NewGuid():N}"; // one namespace per receiver: the process-wide session guard keeps tests apart

    public override ServiceBusReceiveMode ReceiveMode => ServiceBusReceiveMode.PeekLock;

    public override bool IsClosed => false;

    public List<string> Calls { get; } = [];

    /// <summary>Renews the session lock: returns normally (moving <see cref="LockedUntil"/> by <see cref="RenewBy"/>) or throws this.</summary>
    public Exception? RenewFailure { get; set; }

    public TimeSpan RenewBy { get; set; } = TimeSpan.FromSeconds(30);

    public Func<string, ServiceBusReceivedMessage, Task>? OnSettle { get; set; }

    public void Enqueue(params ServiceBusReceivedMessage[] messages)
    {
        foreach (var message in messages)
        {
            _messages.AddLast(message);
        }
    }

    /// <summary>Puts an abandoned message back at the head of the session, as the broker does.</summary>
    public void PutBack(ServiceBusReceivedMessage message) => _messages.AddFirst(message);

    public override Task<IReadOnlyList<ServiceBusReceivedMessage>> ReceiveMessagesAsync(int maxMessages, TimeSpan? maxWaitTime = null, CancellationToken cancellationToken = default)
    {
        Calls.Add($"receive {maxMessages}");
        var batch = new List<ServiceBusReceivedMessage>();
        while (batch.Count < maxMessages && _messages.Count > 0)
        {
            batch.Add(_messages.First!.Value);
            _messages.RemoveFirst();
        }

        return Task.FromResult<IReadOnlyList<ServiceBusReceivedMessage>>(batch);
    }

    public override Task RenewSessionLockAsync(CancellationToken cancellationToken = default)
    {
        Calls.Add("renew-session");
        if (RenewFailure is not null)
        {
            return Task.FromException(RenewFailure);
        }

        LockedUntil += RenewBy;
        return Task.CompletedTask;
    }

    public override Task CompleteMessageAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken = default) => Settle("complete", message);

    public override Task AbandonMessageAsync(ServiceBusReceivedMessage message, IDictionary<string, object>? propertiesToModify = null, CancellationToken cancellationToken = default) =>
        Settle("abandon", message);

    public override ValueTask DisposeAsync() => ValueTask.CompletedTask;

    private Task Settle(string operation, ServiceBusReceivedMessage message)
    {
        Calls.Add($"{operation} {message.MessageId}");
        return OnSettle is null ? Task.CompletedTask : OnSettle(operation, message);
    }
}
