namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>A receiver attached to an entity, as the entity's bookkeeping sees it (the AMQP link is behind it).</summary>
internal interface IConsumer
{
    /// <summary>The session this consumer holds, or null for a receiver of a session-less entity.</summary>
    string? SessionId { get; }

    /// <summary>True when the receiver settles on send (ReceiveAndDelete): delivering the message removes it.</summary>
    bool ReceiveAndDelete { get; }

    /// <summary>Credit the broker may still use (changed only under the broker's lock).</summary>
    int Credit { get; set; }

    /// <summary>The name of the receive link (what the client sends as <c>associated-link-name</c>), or null without one.</summary>
    string? LinkName { get; }

    /// <summary>True once the link is closed.</summary>
    bool IsClosed { get; }
}
