using System.Diagnostics.Tracing;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace LeaseSimulation.Tests.ServiceBus;

/// <summary>
/// <c>receiver-keeper</c> opens its receiver's <c>$management</c> link (a peek past the last message) before its first
/// receive, as docs/keep-your-servicebusprocessor.md tells a receiver loop with a keeper to. Without it the SDK opened the
/// link at the first renewal: two more answers that, on the starved pool, waited for pool threads while 500 ms locks ran
/// out (traced 2026-11-28: the first two messages lost with 296–299 ms of lock left at hand-off). Read from the SDK's own
/// event source, in the order the receiver logged its calls.
/// </summary>
public sealed class ReceiverKeeperManagementLinkTests
{
    private const int ReceiveMessageStart = 7; // Azure-Messaging-ServiceBus event ids (7.21)
    private const int PeekMessageComplete = 29;

    [Fact]
    public void ReceiverKeeper_OpensItsReceiversManagementLink_BeforeItsFirstReceive()
    {
        using var events = new ServiceBusEvents();
        var settings = new SimulationSettings
        {
            Broker = BrokerKind.ServiceBus,
            Clock = ClockKind.Real,
            Context = ContextKind.ThreadPool,
            CpuMode = CpuMode.Sleep,
            TimeScale = 0.2,
            Messages = 2,
            Loops = 1,
            CpuTime = TimeSpan.FromMilliseconds(10),
        };

        SimulationRunner.Run(settings, StrategyCatalog.Get("receiver-keeper"), _ => { });

        var seen = events.Snapshot();
        var receivers = seen.Where(e => e.Id == ReceiveMessageStart).Select(e => e.Identifier).Distinct().ToList();
        receivers.Should().NotBeEmpty("the run's receiver received");
        foreach (var receiver in receivers)
        {
            var firstReceive = seen.FindIndex(e => e.Id == ReceiveMessageStart && e.Identifier == receiver);
            var peeked = seen.FindIndex(e => e.Id == PeekMessageComplete && e.Identifier == receiver);
            peeked.Should().BeInRange(0, firstReceive - 1, "receiver {0} opens its management link (a peek, answered) before it first receives", receiver);
        }
    }

    /// <summary>Records the SDK's Informational events in the order they were written (the tests of this assembly run one at a time).</summary>
    private sealed class ServiceBusEvents : EventListener
    {
        private readonly List<(int Id, string? Identifier)> _events = [];

        public List<(int Id, string? Identifier)> Snapshot()
        {
            lock (_events)
            {
                return [.. _events];
            }
        }

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "Azure-Messaging-ServiceBus")
            {
                EnableEvents(eventSource, EventLevel.Informational);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            if (eventData.EventId is ReceiveMessageStart or PeekMessageComplete)
            {
                lock (_events)
                {
                    _events.Add((eventData.EventId, eventData.Payload is [string identifier, ..] ? identifier : null));
                }
            }
        }
    }
}
