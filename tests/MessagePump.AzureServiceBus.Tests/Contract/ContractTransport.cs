namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Contract;

/// <summary>
/// One transport under the contract suite: a fresh queue with a given lock duration, a way to send to it, and a way to
/// make the broker's locks run out. Everything else the suite does goes through <see cref="IMessageSource"/> and
/// <see cref="ILeasedMessage"/> only.
/// </summary>
public abstract class ContractTransport : IAsyncDisposable
{
    /// <summary>Gets the transport's name, as the theory shows it.</summary>
    public abstract string Name { get; }

    /// <summary>Creates a fresh, empty queue and returns its source.</summary>
    public abstract Task<IMessageSource> CreateQueueAsync(TimeSpan lockDuration);

    /// <summary>Sends one message to the queue last created.</summary>
    public abstract Task SendAsync(string messageId, string body);

    /// <summary>Makes every lock taken so far run out on the broker (a virtual clock advanced, or the real clock waited).</summary>
    public abstract Task ExpireLocksAsync(TimeSpan lockDuration);

    /// <inheritdoc />
    public abstract ValueTask DisposeAsync();

    /// <inheritdoc />
    public override string ToString() => Name;
}
