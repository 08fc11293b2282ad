using PriorityAsync.MessagePump;

namespace PriorityAsync.Reliability.Tests.Swarm;

/// <summary>The accounting invariants of docs/message-pump.md, as checks that collect what they find broken.</summary>
internal sealed class SwarmInvariants
{
    private readonly List<string> _violations = [];

    public IReadOnlyList<string> Violations => _violations;

    /// <summary>Each message is in exactly one place, each delivery ends once, each released delivery comes back or is dead-lettered.</summary>
    public void Broker(string when, InMemoryQueueStatistics s)
    {
        Check(s.Sent == s.Completed + s.DeadLettered + s.Available + s.InFlight, $"{when}: a message is in no place or in two ({s})");
        Check(
            s.Received == s.Completed + s.Abandoned + s.LeasesLost + (s.DeadLettered - s.MaxDeliveryDeadLettered) + s.InFlight,
            $"{when}: a delivery has no outcome or two ({s})");
        Check(
            s.Abandoned + s.LeasesLost == s.Redelivered + s.MaxDeliveryDeadLettered + s.AwaitingRedelivery,
            $"{when}: a released delivery neither came back nor was dead-lettered ({s})");
    }

    /// <summary>A stopped pump has one outcome per delivery and leaves nothing locked.</summary>
    public void StoppedPump(string when, MessagePumpStatistics pump, InMemoryQueueStatistics broker)
    {
        Check(pump.InFlight == 0, $"{when}: the pump still counts {pump.InFlight} in flight");
        Check(broker.InFlight == 0, $"{when}: the broker still holds {broker.InFlight} lock(s) after StopAsync returned");
        Check(
            pump.Received == pump.Completed + pump.Abandoned + pump.DeadLettered + pump.Deferred + pump.LeasesLost + pump.SettleFailures,
            $"{when}: a delivery has no outcome in the pump's books ({pump})");
    }

    /// <summary>
    /// A stopped pump's books are final the moment StopAsync returns: handlers that return later change nothing but the
    /// gauge of such handlers still running (<see cref="MessagePumpStatistics.HandlersRunningAfterStop"/>), which only falls.
    /// </summary>
    public void Unchanged(string when, MessagePumpStatistics atReturn, MessagePumpStatistics later)
    {
        Check(atReturn with { HandlersRunningAfterStop = 0 } == later with { HandlersRunningAfterStop = 0 }, $"{when}: the stopped pump's books changed ({atReturn} became {later})");
        Check(later.HandlersRunningAfterStop <= atReturn.HandlersRunningAfterStop, $"{when}: more handlers run after the stop than when it returned ({atReturn} became {later})");
    }

    /// <summary>The pumps that used the broker, added up, agree with it.</summary>
    public void BooksAgree(string when, InMemoryQueueStatistics broker, params MessagePumpStatistics[] pumps)
    {
        Check(pumps.Sum(p => p.Received) == broker.Received, $"{when}: received {pumps.Sum(p => p.Received)} by the pumps, {broker.Received} by the broker");
        Check(pumps.Sum(p => p.Completed) == broker.Completed, $"{when}: completed {pumps.Sum(p => p.Completed)} by the pumps, {broker.Completed} by the broker");
        Check(pumps.Sum(p => p.Abandoned) == broker.Abandoned, $"{when}: abandoned {pumps.Sum(p => p.Abandoned)} by the pumps, {broker.Abandoned} by the broker");
        Check(pumps.Sum(p => p.DeadLettered) == broker.DeadLettered - broker.MaxDeliveryDeadLettered, $"{when}: dead-lettered by handlers disagrees");
        Check(pumps.Sum(p => p.LeasesLost) == broker.LeasesLost, $"{when}: leases lost {pumps.Sum(p => p.LeasesLost)} by the pumps, {broker.LeasesLost} by the broker");
        Check(pumps.Sum(p => p.Renewals) == broker.Renewals, $"{when}: renewals {pumps.Sum(p => p.Renewals)} by the pumps, {broker.Renewals} by the broker");
    }

    /// <summary>Drained to the end: every message ended exactly once, completed or dead-lettered; poison only dead-lettered.</summary>
    public void EveryMessageEndedOnce(InMemoryQueueStatistics broker, IReadOnlyList<InMemoryDeadLetter> deadLetters, IEnumerable<string> poison)
    {
        Check(broker.Available == 0 && broker.InFlight == 0 && broker.AwaitingRedelivery == 0, $"end: not drained ({broker})");
        Check(broker.Completed + broker.DeadLettered == broker.Sent, $"end: {broker.Sent} sent but {broker.Completed} completed and {broker.DeadLettered} dead-lettered");
        Check(deadLetters.Select(d => d.MessageId).Distinct().Count() == deadLetters.Count, "end: a message was dead-lettered twice");
        var missing = poison.Except(deadLetters.Select(d => d.MessageId)).ToArray();
        Check(missing.Length == 0, $"end: poison message(s) {string.Join(", ", missing)} were not dead-lettered");
    }

    private void Check(bool holds, string violation)
    {
        if (!holds)
        {
            _violations.Add(violation);
        }
    }
}
