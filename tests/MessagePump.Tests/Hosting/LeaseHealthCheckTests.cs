using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.Hosting;
using PriorityAsync.MessagePump.Tests.Pump;

namespace PriorityAsync.MessagePump.Tests.Hosting;

/// <summary>
/// <c>AddLeaseKeeper</c> on the registered scheduler, and the lease health check over the keeper's and the hosted
/// pumps' lease slack and lost locks.
/// </summary>
public class LeaseHealthCheckTests
{
    private static readonly DateTimeOffset Now = new(2026, 11, 28, 12, 0, 0, TimeSpan.Zero);

    public static TheoryData<TimeSpan?, int?, HealthStatus> Cases => new()
    {
        { null, null, HealthStatus.Healthy },                              // nothing renewed yet, nothing lost
        { TimeSpan.FromSeconds(10), null, HealthStatus.Healthy },          // renewed with 10 s left
        { TimeSpan.FromSeconds(5), 301, HealthStatus.Healthy },            // at the degraded threshold; lost 5 min 1 s ago
        { TimeSpan.FromSeconds(4.9), null, HealthStatus.Degraded },
        { TimeSpan.FromSeconds(10), 299, HealthStatus.Degraded },          // a lease lost within the last 5 minutes
        { TimeSpan.FromSeconds(0.9), null, HealthStatus.Unhealthy },
        { TimeSpan.FromSeconds(0.9), 1, HealthStatus.Unhealthy },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void Thresholds_DefaultOptions(TimeSpan? minSlack, int? lostSecondsAgo, HealthStatus expected)
    {
        var stats = new LeaseKeeperStatistics
        {
            MinRecentSlack = minSlack,
            LeasesLost = lostSecondsAgo is null ? 0 : 1,
            LastLeaseLostAt = lostSecondsAgo is { } ago ? Now - TimeSpan.FromSeconds(ago) : null,
        };

        var result = LeaseHealthCheck.Judge([("healthy", new LeaseKeeperStatistics(), Now), ("k", stats, Now)], new LeaseHealthCheckOptions());

        result.Status.Should().Be(expected, result.Description);
        if (expected != HealthStatus.Healthy)
        {
            result.Description.Should().StartWith("'k' ");
        }
    }

    /// <summary>
    /// The thresholds are set for the default rule's 10 s of lock left at renewal. A keeper of 5 s locks renews on time
    /// with 2.5 s left, which would read Degraded for ever (under 5 s), so each renewal is judged against the thresholds
    /// scaled to the buffer it was planned with (5 s and 1 s become 1.25 s and 0.25 s for a 2.5 s buffer).
    /// </summary>
    [Theory]
    [InlineData(2.5, 2.5, HealthStatus.Healthy)]     // a 5 s lock renewed on time
    [InlineData(1.3, 2.5, HealthStatus.Healthy)]
    [InlineData(1.2, 2.5, HealthStatus.Degraded)]    // more than half of its buffer gone
    [InlineData(0.2, 2.5, HealthStatus.Unhealthy)]   // more than 90 % gone
    [InlineData(4.9, 20, HealthStatus.Degraded)]     // a buffer above 10 s: the thresholds as set
    [InlineData(4.9, 10, HealthStatus.Degraded)]
    public void Thresholds_AreScaledToTheRenewalBufferTheLeaseWasPlannedWith(double slackSeconds, double plannedSeconds, HealthStatus expected)
    {
        var slack = TimeSpan.FromSeconds(slackSeconds);
        var stats = new LeaseKeeperStatistics { MinRecentSlack = slack, WorstRecentRenewal = new LateRenewal(slack, TimeSpan.FromSeconds(plannedSeconds)) };

        var result = LeaseHealthCheck.Judge([("k", stats, Now)], new LeaseHealthCheckOptions());

        result.Status.Should().Be(expected, result.Description);
    }

    [Fact]
    public void TheHealthyDescription_CountsTheKeepers()
    {
        var renewed = new LeaseKeeperStatistics { MinRecentSlack = TimeSpan.FromSeconds(10) };

        var result = LeaseHealthCheck.Judge([("a", renewed, Now), ("b", renewed, Now)], new LeaseHealthCheckOptions());

        result.Description.Should().Be("2 lease keeper(s) healthy", "two keepers, each with three data entries once it has renewed");
    }

    [Fact]
    public void AFiveSecondLockRenewedOnTime_IsHealthy_ALateRenewalIsNot_AndOnTimeRenewalsBringItBack()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(5) });
        queue.Send(new byte[] { 1 }, "m1");
        var reports = new List<HealthCheckResult>();
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler, new LeaseKeeperOptions { Name = "k" });
            void Check() => reports.Add(LeaseHealthCheck.Judge([(keeper.Name, keeper.GetStatistics(), clock.GetUtcNow())], new LeaseHealthCheckOptions()));
            var handle = keeper.Keep((await queue.ReceiveAsync())!, queue);
            await Task.Delay(TimeSpan.FromSeconds(21), clock); // renewed every 2.5 s, with 2.5 s left; the next falls due at 22.5 s
            Check();
            clock.Advance(TimeSpan.FromSeconds(3.5));           // CPU work holds the only thread until 24.5 s: renewed with 0.5 s left
            await Task.Delay(TimeSpan.FromMilliseconds(100), clock);
            Check();
            await Task.Delay(TimeSpan.FromSeconds(90), clock);  // 36 renewals on time push the late one out of the last 32
            Check();
            await handle.CompleteAsync();
        });

        reports.Select(r => r.Status).Should().Equal([HealthStatus.Healthy, HealthStatus.Degraded, HealthStatus.Healthy], string.Join(" | ", reports.Select(r => r.Description)));
        reports[1].Description.Should().Be("'k' renewed with 0.5 s of lock left (under 1.25 s: 5 s scaled to its 2.5 s renewal buffer)");
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, LeasesLost = 0 });
    }

    [Fact]
    public void Options_BreakingTheirRule_AreNamed()
    {
        var builder = new ServiceCollection().AddHealthChecks();

        builder.Invoking(b => b.AddLeaseHealthCheck(configure: o => o.UnhealthySlack = TimeSpan.Zero)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("UnhealthySlack");
        builder.Invoking(b => b.AddLeaseHealthCheck(configure: o => o.DegradedSlack = TimeSpan.FromSeconds(1))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("DegradedSlack");
        builder.Invoking(b => b.AddLeaseHealthCheck(configure: o => o.LostLeaseWindow = TimeSpan.Zero)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("LostLeaseWindow");
    }

    [Fact]
    public async Task AddLeaseKeeper_UsesTheRegisteredScheduler_AndTheCheckWatchesItAndTheHostedPumps()
    {
        var queue = new InMemoryTransport().CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromMilliseconds(500) });
        queue.Send(new byte[] { 1 }, "short-lock");
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddPriorityScheduler(o => o.WorkerCount = 1);
        services.AddLeaseKeeper(o => o.Name = "own-loop");
        services.AddMessagePump(_ => new InMemoryTransport().CreateQueue("other"), (_, _) => Task.CompletedTask, o => o.Name = "pump");
        services.AddHealthChecks().AddLeaseHealthCheck();
        await using var provider = services.BuildServiceProvider();
        var keeper = provider.GetRequiredService<LeaseKeeper>();
        var health = provider.GetRequiredService<HealthCheckService>();

        keeper.Scheduler.Should().BeSameAs(provider.GetRequiredService<PriorityScheduler>());
        keeper.Name.Should().Be("own-loop");
        var before = await health.CheckHealthAsync();
        before.Status.Should().Be(HealthStatus.Healthy);
        before.Entries["leases"].Data.Keys.Should().BeEquivalentTo(["own-loop.kept", "own-loop.leasesLost", "pump.kept", "pump.leasesLost", "pump.receiveFailures"]);

        // A message settled behind the keeper's back: its first renewal is refused, a lost lease, Degraded for 5 minutes.
        var message = (await queue.ReceiveAsync())!;
        using var handle = keeper.Keep(message, queue);
        await message.CompleteAsync();
        await VirtualRun.WaitUntilAsync(() => handle.IsLost, TimeProvider.System, TimeSpan.FromSeconds(30), TimeSpan.FromMilliseconds(10));
        var after = await health.CheckHealthAsync();

        after.Status.Should().Be(HealthStatus.Degraded);
        after.Entries["leases"].Description.Should().StartWith("'own-loop' lost a lease at ");
        provider.GetServices<IHostedService>().OfType<MessagePumpHostedService>().Should().ContainSingle("the pump the check watched");
    }

    [Fact]
    public async Task AddLeaseKeeper_WithoutAScheduler_SaysWhatToRegister()
    {
        var services = new ServiceCollection();
        services.AddLeaseKeeper();
        await using var provider = services.BuildServiceProvider();

        provider.Invoking(p => p.GetRequiredService<LeaseKeeper>()).Should().Throw<InvalidOperationException>().WithMessage("*services.AddPriorityScheduler()*");
    }
}
