using LeaseSimulation.Brokers.ServiceBus;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;
using Xunit.Abstractions;

namespace LeaseSimulation.Tests.ServiceBus;

/// <summary>
/// One small run per Service Bus strategy against the in-process test broker, on the real clock. Only what holds at
/// any load is asserted: the run ends, and every message is completed exactly once on the broker or dead-lettered,
/// with nothing left locked or waiting. How many locks were lost depends on the machine's load and is only printed.
/// </summary>
public sealed class ServiceBusRunTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData("processor", ContextKind.SingleThread)]
    [InlineData("processor-guide", ContextKind.ThreadPool)]
    [InlineData("fifo", ContextKind.SingleThread)]
    [InlineData("pump", ContextKind.ThreadPool)]
    [InlineData("pump", ContextKind.SingleThread)]
    [InlineData("processor-keeper", ContextKind.SingleThread)]
    [InlineData("processor-keeper", ContextKind.ThreadPool)]
    [InlineData("receiver-keeper", ContextKind.SingleThread)]
    [InlineData("receiver-keeper", ContextKind.ThreadPool)]
    public void ServiceBusRun_EndsWithEveryMessageCompletedExactlyOnceOrDeadLettered(string strategy, ContextKind context)
    {
        const int messages = 6;
        var settings = new SimulationSettings
        {
            Broker = BrokerKind.ServiceBus,
            Clock = ClockKind.Real,
            Context = context,
            CpuMode = CpuMode.Sleep,
            TimeScale = 0.2,
            Messages = messages,
            Loops = 3,
            CpuTime = TimeSpan.FromMilliseconds(100),
        };
        ScenarioRun? run = null;

        var result = SimulationRunner.Run(settings, StrategyCatalog.Get(strategy), r => run = r);

        var ledger = run!.ServiceBusLedger!;
        var audit = ledger.BrokerAudit!;
        output.WriteLine($"{strategy} on {context}: completed {result.Completed}, dead-lettered {result.DeadLettered}, leases lost {result.LeasesLost}, duplicates {result.Duplicates}, deadline {result.StoppedAtDeadline}");
        result.Broker.Should().Be("servicebus");
        if (!result.StoppedAtDeadline)
        {
            // (At a deadline, reached only under extreme load, a message on its way to a consumer that is closing stays
            // locked until its lock runs out, and not every message need have been handled: only the lines below hold.)
            audit.Locked.Should().Be(0, "a finished run leaves nothing locked");
            audit.Active.Should().Be(0, "the run ends when the queue is drained");
            for (var id = 1; id <= messages; id++)
            {
                var deadLettered = audit.DeadLettered.Contains(id.ToString(System.Globalization.CultureInfo.InvariantCulture));
                (audit.Completions[id - 1] + (deadLettered ? 1 : 0)).Should().Be(1, "message {0} is completed exactly once or dead-lettered", id);
            }

            (result.Completed + result.DeadLettered).Should().Be(messages);
            result.HandlerRuns.Should().Be(messages + result.Duplicates, "every message was handled once, plus its duplicates");
            (result.LeasesLost >= result.Duplicates).Should().BeTrue("a duplicate is a redelivery after a lost lock");
        }

        audit.Completions.Should().OnlyContain(c => c <= 1, "no message is ever completed twice");
        result.Completed.Should().Be(audit.Completions.Sum(), "the run counts the completions the broker counted");
    }

    [Fact]
    public void Ledger_ACompletionAfterARacingLockLostVerdict_CountsAsCompleted_NotAsALostLock()
    {
        var run = new ScenarioRun(new SimulationSettings { Broker = BrokerKind.ServiceBus, Clock = ClockKind.Real, Messages = 1 });
        var ledger = new ServiceBusLedger(run, maxDeliveryCount: 2);

        ledger.OnDelivered("1", 1);
        ledger.OnSettled("1", 1, DeliveryOutcome.LockLost); // a renewal answered after the completion removed the message
        ledger.OnSettled("1", 1, DeliveryOutcome.Completed);

        ledger.LeasesLost.Should().Be(0);
        ledger.Completed.Should().Be(1);
        ledger.DeadLettered.Should().Be(0);
        run.Tracker.Snapshot().Done.Should().Be(1);
    }

    [Fact]
    public void ProcessorOptions_FollowTheDefaultsOrTheGuide()
    {
        var settings = new SimulationSettings { Broker = BrokerKind.ServiceBus, Clock = ClockKind.Real, Threads = 6 };

        var defaults = new ProcessorStrategy(followsGuide: false).CreateOptions(settings);
        var guide = new ProcessorStrategy(followsGuide: true).CreateOptions(settings);

        defaults.MaxConcurrentCalls.Should().Be(1);
        defaults.PrefetchCount.Should().Be(0);
        defaults.MaxAutoLockRenewalDuration.Should().Be(TimeSpan.FromMinutes(5));
        defaults.AutoCompleteMessages.Should().BeFalse("the run completes explicitly to see whether each completion found its lock");
        guide.MaxConcurrentCalls.Should().Be(6);
        guide.PrefetchCount.Should().Be(0);
        guide.MaxAutoLockRenewalDuration.Should().BeGreaterThanOrEqualTo(settings.EffectiveDeadline * settings.TimeScale);
    }

    [Fact]
    public void ProcessorKeeperOptions_AreTheDefaults_WithTheProcessorsOwnRenewalOff()
    {
        var settings = new SimulationSettings { Broker = BrokerKind.ServiceBus, Clock = ClockKind.Real, Threads = 6 };

        var options = ProcessorKeeperStrategy.CreateOptions(settings);

        options.MaxAutoLockRenewalDuration.Should().Be(TimeSpan.Zero, "the keeper renews; the processor's own renewal would race it");
        options.MaxConcurrentCalls.Should().Be(1, "otherwise the SDK's defaults, as processor");
        options.PrefetchCount.Should().Be(0);
        options.AutoCompleteMessages.Should().BeFalse("the same handler as processor");
        StrategyCatalog.Get("processor-keeper").Supports(BrokerKind.ServiceBus).Should().BeTrue();
        StrategyCatalog.Get("receiver-keeper").Supports(BrokerKind.Memory).Should().BeFalse("the keeper strategies are Service Bus's");
    }

    [Fact]
    public void Ledger_CountsDuplicatesAndLostLocks_AndInfersALossFromARedelivery()
    {
        var run = new ScenarioRun(new SimulationSettings { Broker = BrokerKind.ServiceBus, Clock = ClockKind.Real, Messages = 2 });
        var ledger = new ServiceBusLedger(run, maxDeliveryCount: 2);

        ledger.OnDelivered("1", 1);
        ledger.OnHandlerStarted("1");
        ledger.OnDelivered("1", 2); // the first delivery's lock ran out unnoticed
        ledger.OnHandlerStarted("1");
        ledger.OnSettled("1", 1, DeliveryOutcome.LockLost); // noticed late: counted once
        ledger.OnSettled("1", 2, DeliveryOutcome.Completed);
        ledger.OnDelivered("2", 1);
        ledger.OnSettled("2", 1, DeliveryOutcome.LockLost);
        ledger.OnDelivered("2", 2);
        ledger.OnSettled("2", 2, DeliveryOutcome.LockLost); // the last delivery: dead-lettered

        ledger.Deliveries.Should().Be(4);
        ledger.HandlerRuns.Should().Be(2);
        ledger.Duplicates.Should().Be(1);
        ledger.LeasesLost.Should().Be(3);
        ledger.Completed.Should().Be(1);
        ledger.DeadLettered.Should().Be(1);
        ledger.AllSettled.Should().BeTrue();
        var act = () => ledger.OnDelivered("3", 1);
        act.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("messageId");
    }
}
