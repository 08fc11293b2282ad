namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>A settlement a receiver asked for: what, why (dead-letter), and the application properties to change.</summary>
internal sealed record Settlement(SettleKind Kind, string? Reason, string? Description, IReadOnlyList<KeyValuePair<string, object>> PropertiesToModify);
