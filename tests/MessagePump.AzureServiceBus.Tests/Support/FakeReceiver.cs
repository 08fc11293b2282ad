using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

/// <summary>
/// A <see cref="ServiceBusReceiver"/> through its protected constructor: scripted receives, and every renew and
/// settle call recorded and answered by a function the test sets.
/// </summary>
internal sealed class FakeReceiver : ServiceBusReceiver
{
    private readonly Queue<Func<int, TimeSpan?, Task<IReadOnlyList<ServiceBusReceivedMessage>>>> _receives = new();

    public FakeReceiver(string entityPath = "orders", ServiceBusReceiveMode mode = ServiceBusReceiveMode.PeekLock)
    {
        Path = entityPath;
        Mode = mode;
    }

    public string Path { get; }

    public ServiceBusReceiveMode Mode { get; }

    public bool Closed { get; set; }

    public override string EntityPath => Path;

    public override ServiceBusReceiveMode ReceiveMode => Mode;

    public override bool IsClosed => Closed;

    public List<string> Calls { get; } = [];

    public List<CancellationToken> ReceiveTokens { get; } = [];

    public List<(int Max, TimeSpan? Wait)> Receives { get; } = [];

    /// <summary>Answers renewals: the new expiry, or throws. Default: one minute after the current expiry.</summary>
    public Func<Guid, CancellationToken, Task<DateTimeOffset>>? OnRenew { get; set; }

    /// <summary>Answers settlements: (operation, message, token).</summary>
    public Func<string, ServiceBusReceivedMessage, CancellationToken, Task>? OnSettle { get; set; }

    public List<(string Reason, string? Description)> DeadLetters { get; } = [];

    /// <summary>Answers peeks (the source's peek that opens the management link): (from sequence number). Default: nothing to peek.</summary>
    public Func<long?, Task<ServiceBusReceivedMessage?>>? OnPeek { get; set; }

    public List<long?> Peeks { get; } = [];

    public void Enqueue(params ServiceBusReceivedMessage[] batch) => _receives.Enqueue((_, _) => Task.FromResult<IReadOnlyList<ServiceBusReceivedMessage>>(batch));

    public void EnqueueFailure(Exception exception) => _receives.Enqueue((_, _) => Task.FromException<IReadOnlyList<ServiceBusReceivedMessage>>(exception));

    public void Enqueue(Func<int, TimeSpan?, Task<IReadOnlyList<ServiceBusReceivedMessage>>> receive) => _receives.Enqueue(receive);

    public override Task<IReadOnlyList<ServiceBusReceivedMessage>> ReceiveMessagesAsync(int maxMessages, TimeSpan? maxWaitTime = null, CancellationToken cancellationToken = default)
    {
        Calls.Add("receive");
        Receives.Add((maxMessages, maxWaitTime));
        ReceiveTokens.Add(cancellationToken);
        return _receives.Count > 0 ? _receives.Dequeue()(maxMessages, maxWaitTime) : Task.FromResult<IReadOnlyList<ServiceBusReceivedMessage>>([]);
    }

    public override Task<ServiceBusReceivedMessage> PeekMessageAsync(long? fromSequenceNumber = null, CancellationToken cancellationToken = default)
    {
        Calls.Add("peek");
        Peeks.Add(fromSequenceNumber);
        return (OnPeek is null ? Task.FromResult<ServiceBusReceivedMessage?>(null) : OnPeek(fromSequenceNumber))!;
    }

    public override async Task RenewMessageLockAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken = default)
    {
        Calls.Add("renew");
        var lockedUntil = OnRenew is null ? message.LockedUntil.AddMinutes(1) : await OnRenew(message.LockTokenGuid(), cancellationToken);

        // The SDK writes the new expiry into the message (an internal setter), as the real receiver does.
        typeof(ServiceBusReceivedMessage).GetProperty(nameof(ServiceBusReceivedMessage.LockedUntil))!.SetValue(message, lockedUntil);
    }

    public override Task CompleteMessageAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken = default) => Settle("complete", message, cancellationToken);

    public override Task AbandonMessageAsync(ServiceBusReceivedMessage message, IDictionary<string, object>? propertiesToModify = null, CancellationToken cancellationToken = default) =>
        Settle("abandon", message, cancellationToken);

    public override Task DeadLetterMessageAsync(ServiceBusReceivedMessage message, string deadLetterReason, string? deadLetterErrorDescription = null, CancellationToken cancellationToken = default)
    {
        DeadLetters.Add((deadLetterReason, deadLetterErrorDescription));
        return Settle("dead-letter", message, cancellationToken);
    }

    public override ValueTask DisposeAsync()
    {
        Closed = true;
        return ValueTask.CompletedTask;
    }

    private Task Settle(string operation, ServiceBusReceivedMessage message, CancellationToken cancellationToken)
    {
        Calls.Add(operation);
        return OnSettle is null ? Task.CompletedTask : OnSettle(operation, message, cancellationToken);
    }
}
