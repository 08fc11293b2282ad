using PriorityAsync.TestKit;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// A handler that ignores its token and outlives StopAsync and its scheduler's disposal: the pump's books say nothing
/// is in flight the moment StopAsync returns, the broker holds no lock, and the handler's late continuation still runs
/// (rejected to the thread pool by the stopped scheduler, counted). Real threads: orderings and generous bounds only.
/// The same scenario runs in a child process in PriorityAsync.Tests (ProcessSurvivalTests), which proves the process
/// survives even if the scheduler's contract were broken.
/// </summary>
public class HandlerOutlivesStopTests
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task HandlerIgnoringItsToken_OutlivesStopAndDisposal_BooksSayNothingInFlight_AndItsContinuationRuns()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ShutdownTimeout = TimeSpan.Zero });
        var queue = new InMemoryTransport().CreateQueue("q");
        queue.Send(new byte[] { 1 });
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var resumed = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var pump = new PriorityMessagePump(
            queue,
            async (_, _) =>
            {
                started.TrySetResult();
                await release.Task; // ignores its token
                resumed.TrySetResult(SynchronizationContext.Current is null);
            },
            scheduler,
            new MessagePumpOptions { ShutdownTimeout = TimeSpan.FromMilliseconds(50) });
        await pump.StartAsync();
        await started.Task.WaitAsync(Generous);

        await pump.StopAsync().WaitAsync(Generous);
        var atStop = pump.GetStatistics();
        var brokerAtStop = queue.GetStatistics();
        await scheduler.DisposeAsync().AsTask().WaitAsync(Generous);
        release.TrySetResult();
        var onThePool = await resumed.Task.WaitAsync(Generous);

        atStop.InFlight.Should().Be(0, "the message was abandoned; a handler still running is not a message in flight ({0})", atStop);
        atStop.Should().BeEquivalentTo(new { Received = 1, Abandoned = 1, AbandonedAtStop = 1, LeasesLost = 0, UnsettledAtStop = 0 });
        brokerAtStop.Should().BeEquivalentTo(new { InFlight = 0, Abandoned = 1, LeaseLostErrors = 0 });
        onThePool.Should().BeTrue("the late continuation ran on the thread pool, outside the disposed scheduler");
        scheduler.RejectedWorkCount.Should().BePositive("the stopped scheduler rejected the handler's late continuation");
        atStop.HandlersRunningAfterStop.Should().Be(1, "the stop gave up on the handler, which still ran");
        // The handler's path ends just after its late continuation (which set 'resumed'), on the pool as well.
        await Bounded.UntilAsync(() => Task.FromResult(pump.GetStatistics().HandlersRunningAfterStop == 0), Generous, "the end of the handler's path", TimeSpan.FromMilliseconds(5));
        var later = pump.GetStatistics();
        later.Should().BeEquivalentTo(atStop, o => o.Excluding(s => s.HandlersRunningAfterStop), "nothing the handler did after the stop changed the books");
        queue.GetStatistics().ShouldBeConsistent();
    }
}
