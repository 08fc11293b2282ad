using LeaseSimulation.Baselines;
using LeaseSimulation.Hosting;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using Nito.AsyncEx;
using PriorityAsync;

namespace LeaseSimulation.Tests.Scenario;

/// <summary>
/// Which loop <c>--context hosted</c> runs on (the seed's scenario over a context nobody here wrote): Nito.AsyncEx's
/// <see cref="AsyncContext"/> on the real clock, for the FIFO strategies and under the lanes alike; the project's
/// <see cref="FifoSingleThreadContext"/> on virtual time, which only it can drive.
/// </summary>
public sealed class HostLoopTests
{
    private static ScenarioRun Run(ContextKind context, ClockKind clock) => new(new SimulationSettings
    {
        Context = context,
        Clock = clock,
        TimeScale = 0.05,
        Messages = 1,
        Loops = 1,
    });

    [Fact]
    public void Hosted_OnTheRealClock_FifoRunsOnNitoAsyncContext()
    {
        AsyncContext? host = null;
        UnprioritisedHost.Run(Run(ContextKind.Hosted, ClockKind.Real), () =>
        {
            host = AsyncContext.Current;
            return Task.CompletedTask;
        });

        host.Should().NotBeNull();
    }

    [Fact]
    public void Hosted_OnTheRealClock_TheLanesAreHostedOnNitoAsyncContext()
    {
        AsyncContext? host = null;
        PriorityHost.Run(Run(ContextKind.Hosted, ClockKind.Real), async scheduler =>
        {
            var hosted = scheduler.Should().BeOfType<HostedPriorityScheduler>().Subject;
            var seen = new TaskCompletionSource<AsyncContext?>(TaskCreationOptions.RunContinuationsAsynchronously);
            hosted.Host.Post(_ => seen.SetResult(AsyncContext.Current), null);
            host = await seen.Task;
        });

        host.Should().NotBeNull();
    }

    [Theory]
    [InlineData(ContextKind.Hosted, ClockKind.Virtual)]
    [InlineData(ContextKind.SingleThread, ClockKind.Virtual)]
    [InlineData(ContextKind.SingleThread, ClockKind.Real)]
    public void Elsewhere_OneThreadRunsOnTheProjectsFifoContext(ContextKind context, ClockKind clock)
    {
        SynchronizationContext? host = null;
        UnprioritisedHost.Run(Run(context, clock), () =>
        {
            host = SynchronizationContext.Current;
            return Task.CompletedTask;
        });

        host.Should().BeOfType<FifoSingleThreadContext>();
        HostLoop.NameOf(Run(context, clock).Settings).Should().Be(nameof(FifoSingleThreadContext));
    }

    [Fact]
    public void NotOneThread_IsRefused_NamingTheRun()
    {
        var run = () => HostLoop.Run(Run(ContextKind.ThreadPool, ClockKind.Real), () => Task.CompletedTask);

        run.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("run");
    }
}
