namespace LeaseSimulation.Brokers.ServiceBus;

/// <summary>What the in-process test broker held at the end of a run: the exactly-once evidence, from the broker's side.</summary>
/// <param name="Completions">How many times each message ("1" to "N", index 0 for "1") was completed on the broker.</param>
/// <param name="DeadLettered">The ids of the messages in the dead-letter sub-queue.</param>
/// <param name="Locked">How many messages were still locked.</param>
/// <param name="Active">How many messages were still waiting to be received.</param>
/// <param name="RenewCalls">How many renew-lock requests the broker answered (every consumer's, renewed or refused).</param>
public sealed record ServiceBusBrokerAudit(IReadOnlyList<int> Completions, IReadOnlyCollection<string> DeadLettered, int Locked, int Active, int RenewCalls);
