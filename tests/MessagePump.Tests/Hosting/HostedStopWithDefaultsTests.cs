using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.Hosting;
using PriorityAsync.MessagePump.Tests.Pump;

namespace PriorityAsync.MessagePump.Tests.Hosting;

/// <summary>
/// A hosted pump stopped with every default (the generic host's and the pump's) ends inside the host's shutdown
/// timeout: the host waits for a hosted service's stop past its own timeout, an orchestrator's grace period does not.
/// </summary>
public class HostedStopWithDefaultsTests
{
    [Fact]
    public void DefaultShutdownTimeout_LeavesTheStopTimeInsideTheHostsDefault()
    {
        var host = new HostOptions().ShutdownTimeout;

        new MessagePumpOptions().ShutdownTimeout.Should().Be(MessagePumpOptions.DefaultShutdownTimeout);
        (host - MessagePumpOptions.DefaultShutdownTimeout).Should().BeGreaterThanOrEqualTo(TimeSpan.FromSeconds(5), "the abandons at the stop need time before the host gives up");
    }

    /// <summary>
    /// Real clock, the defaults' own durations (about 25 s): handlers that run until their token is canceled hold the stop
    /// for the whole shutdown wait. A probe registered before the pump is stopped after it, with the same host token:
    /// when the probe's stop begins, the pump's stop has returned, and the token must not be canceled yet. With the old
    /// default (30 s, the host's own) the host's token fired first and the abandons came after it.
    /// </summary>
    [Fact]
    public async Task HostedPump_WithTheDefaults_StopsBeforeTheHostsShutdownTimeout()
    {
        var queue = new InMemoryTransport().CreateQueue("orders");
        queue.Send(new byte[] { 1 });
        queue.Send(new byte[] { 2 });
        var running = 0;
        var probe = new StopProbe();
        var builder = Host.CreateApplicationBuilder();
        builder.Services.AddSingleton<IHostedService>(probe);
        builder.Services.AddMessagePump(_ => queue, async (context, cancellationToken) =>
        {
            Interlocked.Increment(ref running);
            await Task.Delay(Timeout.InfiniteTimeSpan, cancellationToken);
        }, o => o.Name = "orders");
        using var host = builder.Build();

        await host.StartAsync();
        await VirtualRun.WaitUntilAsync(() => Volatile.Read(ref running) == 2, TimeProvider.System, TimeSpan.FromSeconds(30), TimeSpan.FromMilliseconds(10));
        await host.StopAsync();

        probe.TokenCanceledWhenStopped.Should().BeFalse("the pump's stop (the service stopped before the probe) must end inside the host's shutdown timeout");
        var pump = host.Services.GetRequiredKeyedService<MessagePumpHostedService>("orders").Pump;
        pump.GetStatistics().Should().BeEquivalentTo(new { Received = 2, AbandonedAtStop = 2, InFlight = 0 });
        queue.GetStatistics().ShouldBeConsistent();
    }

    private sealed class StopProbe : IHostedService
    {
        public bool? TokenCanceledWhenStopped { get; private set; }

        public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public Task StopAsync(CancellationToken cancellationToken)
        {
            TokenCanceledWhenStopped = cancellationToken.IsCancellationRequested;
            return Task.CompletedTask;
        }
    }
}
