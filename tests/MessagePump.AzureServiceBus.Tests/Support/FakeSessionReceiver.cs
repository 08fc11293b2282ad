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

    /// <summary>
    /// The broker's clock: when set, a renewal locks the session for <see cref="RenewBy"/> from the moment it is sent (the
    /// broker acts at once), and <see cref="LockedUntil"/> moves when its answer comes back, after <see cref="AnswerDelay"/>.
    /// </summary>
    public TimeProvider? Clock { get; set; }

    /// <summary>How long the answer to the renewal of each index (from 0) takes to come back, on <see cref="Clock"/>.</summary>
    public Func<int, TimeSpan>? AnswerDelay { get; set; }

    /// <summary>How many renewals the broker has acted on whose answer has not come back yet.</summary>
    public int UnansweredRenewals => Volatile.Read(ref _unanswered);

    private int _renewals;
    private int _unanswered;

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

        if (Clock is not { } clock)
        {
            LockedUntil += RenewBy;
            return Task.CompletedTask;
        }

        return RenewOnClockAsync(clock, _renewals++, cancellationToken);
    }

    private async Task RenewOnClockAsync(TimeProvider clock, int index, CancellationToken cancellationToken)
    {
        var until = clock.GetUtcNow() + RenewBy;
        var delay = AnswerDelay?.Invoke(index) ?? TimeSpan.Zero;
        Interlocked.Increment(ref _unanswered);
        try
        {
            if (delay > TimeSpan.Zero)
            {
                await Task.Delay(delay, clock, cancellationToken); // a caller's cancellation ends the wait, as the SDK's does
            }
        }
        finally
        {
            Interlocked.Decrement(ref _unanswered);
        }

        if (until > LockedUntil)
        {
            LockedUntil = until;
        }
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
