namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>A receiver that asked for the next available session while none was: its attach is answered when one comes.</summary>
internal sealed class SessionWaiter
{
    private readonly TaskCompletionSource<SessionLock> _accepted = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private SessionLock? _session;

    public SessionWaiter(ServiceBusTestQueue queue, IConsumer consumer)
    {
        Queue = queue;
        Consumer = consumer;
    }

    public ServiceBusTestQueue Queue { get; }

    public IConsumer Consumer { get; }

#pragma warning disable VSTHRD003 // The broker owns this task; the attach waits for it by design.
    public Task<SessionLock> Accepted => _accepted.Task;
#pragma warning restore VSTHRD003

    public bool TryAcquireLocked(DateTimeOffset now)
    {
        if (Consumer.IsClosed)
        {
            return false;
        }

        _session = Queue.TryAcquireSessionLocked(Consumer, null, now);
        return _session is not null;
    }

    public void Complete() => _accepted.TrySetResult(_session!);

    public void Fail(Exception exception) => _accepted.TrySetException(exception);
}
