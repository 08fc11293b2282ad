using Microsoft.Extensions.Diagnostics.HealthChecks;
using PriorityAsync.MessagePump.Hosting;
using PriorityAsync.MessagePump.Tests.Pump;

namespace PriorityAsync.MessagePump.Tests.Hosting;

/// <summary>
/// A stop past its timeout is visible: the pump's statistics say since when it stops, how far past
/// <see cref="MessagePumpOptions.ShutdownTimeout"/> it ran and how many handlers it gave up on still run; the lease
/// health check reads them (<c>Unhealthy</c> while the stop overruns, <c>Degraded</c> once it ended so or while those
/// handlers run).
/// </summary>
public sealed class StopHealthTests
{
    private static readonly LeaseHealthCheckOptions Options = new();
    private readonly VirtualTimeProvider _clock = new();

    [Fact]
    public void A_stop_whose_abandon_is_slow_overruns_its_timeout_and_the_health_check_says_so_while_and_after()
    {
        // Every broker call takes 3 s: the abandon of the handler the stop gives up on at its 2 s timeout too.
        var queue = new InMemoryTransport(_clock).CreateQueue("slow", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(60), Latency = TimeSpan.FromSeconds(3) });
        queue.Send(new byte[] { 1 });
        var handlerStarted = false;
        MessagePumpStatistics? running = null, duringStop = null, afterStop = null, afterHandler = null;
        var stopStartedAt = DateTimeOffset.MinValue;
        VirtualRun.Run(_clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, _) =>
                {
                    handlerStarted = true;
                    await Task.Delay(TimeSpan.FromSeconds(60), context.TimeProvider); // ignores its token
                },
                scheduler,
                new MessagePumpOptions { Name = "slow", MaxInFlight = 1, ShutdownTimeout = TimeSpan.FromSeconds(2) });
            await pump.StartAsync();
            while (!handlerStarted)
            {
                await Task.Delay(TimeSpan.FromMilliseconds(100), scheduler.TimeProvider);
            }

            running = pump.GetStatistics();
            stopStartedAt = scheduler.TimeProvider.GetUtcNow();
            var stop = pump.StopAsync();
            await Task.Delay(TimeSpan.FromSeconds(4), scheduler.TimeProvider);
            duringStop = pump.GetStatistics();
            await stop;
            afterStop = pump.GetStatistics();
            await Task.Delay(TimeSpan.FromSeconds(70), scheduler.TimeProvider);
            afterHandler = pump.GetStatistics();
        });

        running!.StoppingSince.Should().BeNull();
        running.StopOverrun.Should().BeNull();
        Judge(running).Status.Should().Be(HealthStatus.Healthy);

        duringStop!.StoppingSince.Should().Be(stopStartedAt);
        duringStop.StopOverrun.Should().BeGreaterThan(Options.StopOverrunTolerance, "4 s into a stop of a 2 s timeout");
        var during = Judge(duringStop);
        during.Status.Should().Be(HealthStatus.Unhealthy);
        during.Description.Should().StartWith("'slow' has been stopping since ").And.Contain("past its shutdown timeout");

        afterStop!.StoppingSince.Should().BeNull();
        afterStop.StopOverrun.Should().BeGreaterThanOrEqualTo(TimeSpan.FromSeconds(3), "the abandon took 3 s after the 2 s timeout");
        afterStop.HandlersRunningAfterStop.Should().Be(1, "the handler ignores its canceled token");
        afterStop.Abandoned.Should().Be(1);
        var after = Judge(afterStop);
        after.Status.Should().Be(HealthStatus.Degraded);
        after.Description.Should().Contain("'slow' stopped").And.Contain("past its shutdown timeout").And.Contain("1 handler(s)");

        afterHandler!.HandlersRunningAfterStop.Should().Be(0, "the handler has returned");
        Judge(afterHandler).Description.Should().NotContain("handler(s)");
    }

    [Fact]
    public void A_stop_within_its_timeout_leaves_the_health_check_healthy()
    {
        var queue = new InMemoryTransport(_clock).CreateQueue("quick", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(60) });
        queue.Send(new byte[] { 1 });
        MessagePumpStatistics? afterStop = null;
        VirtualRun.Run(_clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                (context, cancellationToken) => Task.Delay(TimeSpan.FromSeconds(1), context.TimeProvider, cancellationToken),
                scheduler,
                new MessagePumpOptions { Name = "quick", ShutdownTimeout = TimeSpan.FromSeconds(10) });
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromMilliseconds(500), scheduler.TimeProvider);
            await pump.StopAsync();
            afterStop = pump.GetStatistics();
        });

        afterStop!.Completed.Should().Be(1);
        afterStop.StoppingSince.Should().BeNull();
        afterStop.StopOverrun.Should().BeNull();
        afterStop.HandlersRunningAfterStop.Should().Be(0);
        Judge(afterStop).Status.Should().Be(HealthStatus.Healthy);
    }

    [Fact]
    public void A_negative_stop_overrun_tolerance_is_refused_by_name()
    {
        var options = new LeaseHealthCheckOptions { StopOverrunTolerance = TimeSpan.FromSeconds(-1) };
        var validate = options.Validate;
        validate.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be(nameof(LeaseHealthCheckOptions.StopOverrunTolerance));
    }

    private static HealthCheckResult Judge(MessagePumpStatistics stats) =>
        LeaseHealthCheck.JudgeReceives(LeaseHealthCheck.Judge([], Options), [("slow", stats, DateTimeOffset.UtcNow)], Options);
}
