namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>What the broker reads from an encoded message when it is enqueued.</summary>
internal readonly record struct MessageFacts(string MessageId, string? SessionId, DateTimeOffset? ScheduledEnqueueTime);
