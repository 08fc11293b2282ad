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
        before.Entries["leases"].Data.Keys.Should().BeEquivalentTo(["own-loop.kept", "own-loop.leasesLost", "pump.kept", "pump.leasesLost"]);

        // A 500 ms lock is renewed when half of it is left: with less than a second, which is Unhealthy by default.
        using var handle = keeper.Keep((await queue.ReceiveAsync())!, queue);
        await VirtualRun.WaitUntilAsync(() => handle.RenewalCount > 0, TimeProvider.System, TimeSpan.FromSeconds(30), TimeSpan.FromMilliseconds(10));
        var after = await health.CheckHealthAsync();

        after.Status.Should().Be(HealthStatus.Unhealthy);
        after.Entries["leases"].Description.Should().StartWith("'own-loop' renewed with ");
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
