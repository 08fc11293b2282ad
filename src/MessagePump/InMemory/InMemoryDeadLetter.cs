namespace PriorityAsync.MessagePump;

/// <summary>A message in the dead-letter queue of an <see cref="InMemoryQueue"/>.</summary>
/// <param name="MessageId">The message's identifier.</param>
/// <param name="Reason">Why it was dead-lettered.</param>
/// <param name="DeliveryCount">How many deliveries it had.</param>
public sealed record InMemoryDeadLetter(string MessageId, string Reason, int DeliveryCount);
