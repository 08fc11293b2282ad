using LeaseSimulation.Hosting;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using PriorityAsync.MessagePump;

namespace LeaseSimulation.Tests.ServiceBus;

/// <summary>
/// The keeper of <c>processor-keeper</c> and <c>receiver-keeper</c> is made as docs/keep-your-servicebusprocessor.md
/// tells users to make theirs (<c>new LeaseKeeper(scheduler)</c>, the default renewal rule), not with the pump rows'
/// renewal buffer. With that buffer (lease less renew interval, 300 ms at the head-to-head's scale) a message handed
/// over with 300 ms or less of its 500 ms lock left (measured on the starved pool: 290–299 ms, the SDK's receive answer
/// waits for a pool thread) was refused its lock-duration hint, so the Service Bus adapter kept it without pipelining:
/// each renewal then waited for the last one's answer, which waits for the starved pool (receiver-keeper lost 19–49).
/// </summary>
public sealed class KeeperHostTests
{
    [Fact]
    public async Task Keeper_PipelinesAMessageHandedOverWithLessLockLeftThanTheRenewInterval_AsTheDocsKeeperDoes()
    {
        var settings = new SimulationSettings
        {
            Broker = BrokerKind.ServiceBus,
            Clock = ClockKind.Real,
            Context = ContextKind.StarvedPool,
            CpuMode = CpuMode.Sleep,
            TimeScale = 0.1,
            Messages = 20,
            Loops = 5,
            CpuTime = TimeSpan.FromMilliseconds(1000),
        };
        var run = new ScenarioRun(settings);
        var lockLeft = settings.LeaseDuration * settings.TimeScale * 0.6; // 300 ms of the 500 ms lock: the starved pool took 200 ms
        using var scheduler = KeeperHost.CreateScheduler();
        await using var keeper = KeeperHost.CreateKeeper(run, scheduler);
        var message = new HeldMessage(keeper.TimeProvider.GetUtcNow().AddHours(1));

        // The Service Bus adapter passes the lock left as the source's lock duration; a keeper that refuses it keeps the
        // message without one, and waits for each renewal's answer before the next.
        using var lease = keeper.Keep(message, new LockDurationOnly(lockLeft));

        lease.IsKept.Should().BeTrue();
    }

    private sealed class LockDurationOnly(TimeSpan lockDuration) : IMessageSource
    {
        public TimeSpan? LockDuration => lockDuration;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) => throw new NotSupportedException("Nothing is received in this test.");
    }

    private sealed class HeldMessage(DateTimeOffset lockedUntil) : ILeasedMessage
    {
        public string MessageId => "1";

        public ReadOnlyMemory<byte> Body => default;

        public int DeliveryCount => 1;

        public DateTimeOffset LockedUntil => lockedUntil;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => Task.FromResult(lockedUntil);

        public Task CompleteAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

        public Task AbandonAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => Task.CompletedTask;
    }
}
