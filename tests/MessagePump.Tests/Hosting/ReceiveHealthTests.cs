using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.Hosting;
using PriorityAsync.TestKit;

namespace PriorityAsync.MessagePump.Tests.Hosting;

/// <summary>The lease health check reports a pump whose receives all fail, after its thresholds, and recovers with the receives.</summary>
public sealed class ReceiveHealthTests
{
    private static readonly DateTimeOffset Now = new(2026, 1, 1, 12, 0, 0, TimeSpan.Zero);

    [Theory]
    [InlineData(0, HealthStatus.Healthy)]
    [InlineData(30, HealthStatus.Healthy)]
    [InlineData(60, HealthStatus.Degraded)]
    [InlineData(299, HealthStatus.Degraded)]
    [InlineData(300, HealthStatus.Unhealthy)]
    public void A_pump_failing_to_receive_is_judged_by_how_long_every_receive_has_failed(int failingSeconds, HealthStatus expected)
    {
        var keepers = LeaseHealthCheck.Judge([], new LeaseHealthCheckOptions());
        var stats = new MessagePumpStatistics { ReceiveFailures = 7, ReceiveFailingSince = Now - TimeSpan.FromSeconds(failingSeconds) };

        var result = LeaseHealthCheck.JudgeReceives(keepers, [("orders", stats, Now)], new LeaseHealthCheckOptions());

        result.Status.Should().Be(expected);
        if (expected != HealthStatus.Healthy)
        {
            result.Description.Should().StartWith("'orders' has failed to receive since ").And.Contain("7 failed receives");
        }
    }

    [Fact]
    public void A_pump_whose_receives_are_answered_is_healthy_whatever_failed_before()
    {
        var keepers = LeaseHealthCheck.Judge([], new LeaseHealthCheckOptions());
        var result = LeaseHealthCheck.JudgeReceives(keepers, [("orders", new MessagePumpStatistics { ReceiveFailures = 40 }, Now)], new LeaseHealthCheckOptions());

        result.Status.Should().Be(HealthStatus.Healthy);
        result.Data["orders.receiveFailures"].Should().Be(40L);
    }

    [Fact]
    public void The_thresholds_are_checked()
    {
        var builder = new ServiceCollection().AddHealthChecks();
        builder.Invoking(b => b.AddLeaseHealthCheck(configure: o => o.ReceiveFailingDegradedAfter = TimeSpan.Zero)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("ReceiveFailingDegradedAfter");
        builder.Invoking(b => b.AddLeaseHealthCheck(configure: o => o.ReceiveFailingUnhealthyAfter = TimeSpan.FromSeconds(30))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("ReceiveFailingUnhealthyAfter");
    }

    [Fact]
    public async Task A_hosted_pump_whose_broker_went_away_reads_degraded_until_a_receive_is_answered()
    {
        // Real clock; the test asserts what it observed, not durations: after two failed receives (a pause apart) every
        // receive has failed for longer than the 1 ms threshold, and once one is answered the pump is healthy again.
        var source = new SwitchableSource();
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddPriorityScheduler(o => o.WorkerCount = 1);
        services.AddMessagePump(_ => source, (_, _) => Task.CompletedTask, o =>
        {
            o.Name = "orders";
            o.EmptyReceiveDelay = TimeSpan.FromMilliseconds(20);
        });
        services.AddHealthChecks().AddLeaseHealthCheck(configure: o =>
        {
            o.ReceiveFailingDegradedAfter = TimeSpan.FromMilliseconds(1);
            o.ReceiveFailingUnhealthyAfter = TimeSpan.FromHours(1);
        });
        await using var provider = services.BuildServiceProvider();
        var hosted = provider.GetServices<IHostedService>().ToList();
        var health = provider.GetRequiredService<HealthCheckService>();
        foreach (var service in hosted)
        {
            await service.StartAsync(CancellationToken.None);
        }

        try
        {
            await Bounded.UntilAsync(() => Task.FromResult(source.Failures >= 2), TimeSpan.FromSeconds(30), "two failed receives", TimeSpan.FromMilliseconds(5));
            var failing = await health.CheckHealthAsync();
            source.Failing = false;
            await Bounded.UntilAsync(() => Task.FromResult(source.Answered >= 1), TimeSpan.FromSeconds(30), "an answered receive", TimeSpan.FromMilliseconds(5));
            await Bounded.UntilAsync(async () => (await health.CheckHealthAsync()).Status == HealthStatus.Healthy, TimeSpan.FromSeconds(30), "healthy again", TimeSpan.FromMilliseconds(5));

            failing.Status.Should().Be(HealthStatus.Degraded);
            failing.Entries["leases"].Description.Should().StartWith("'orders' has failed to receive since ");
        }
        finally
        {
            foreach (var service in Enumerable.Reverse(hosted))
            {
                await service.StopAsync(CancellationToken.None);
            }
        }
    }

    private sealed class SwitchableSource : IMessageSource
    {
        private int _failures;
        private int _answered;

        public volatile bool Failing = true;

        public int Failures => Volatile.Read(ref _failures);

        public int Answered => Volatile.Read(ref _answered);

        public TimeSpan? LockDuration => TimeSpan.FromSeconds(30);

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
        {
            if (Failing)
            {
                Interlocked.Increment(ref _failures);
                return Task.FromException<ILeasedMessage?>(new InvalidOperationException("the broker is unreachable"));
            }

            Interlocked.Increment(ref _answered);
            return Task.FromResult<ILeasedMessage?>(null);
        }
    }
}
