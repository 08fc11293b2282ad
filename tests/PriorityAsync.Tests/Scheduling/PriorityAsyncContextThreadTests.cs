using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Scheduling;

public class PriorityAsyncContextThreadTests
{
    [Fact]
    public async Task RunAsync_RunsEveryLaneOnTheOwnedThread()
    {
        await using var owner = new PriorityAsyncContextThread(new PrioritySchedulerOptions { Name = "owned" });

        var threads = await Task.WhenAll(
            owner.RunAsync(LanePriority.Lease, async () =>
            {
                await Task.Delay(1);
                return Thread.CurrentThread.Name;
            }),
            owner.RunAsync(LanePriority.Receive, () => Task.FromResult(Thread.CurrentThread.Name))).WaitAsync(Bounded.Generous);

        threads.Should().Equal("owned", "owned");
    }

    [Fact]
    public async Task JoinAsync_FinishesQueuedWork_ThenCompletes()
    {
        var owner = new PriorityAsyncContextThread();
        var ran = 0;
        for (var i = 0; i < 10; i++)
        {
            owner.Context.GetLane(LanePriority.Processing).SynchronizationContext.Post(_ => ran++, null);
        }

        await owner.JoinAsync().WaitAsync(Bounded.Generous);

        ran.Should().Be(10);
        owner.Completion.IsCompletedSuccessfully.Should().BeTrue();
        owner.Dispose();
    }

    [Fact]
    public async Task ExceptionOfAPostedCallback_FaultsCompletion()
    {
        var owner = new PriorityAsyncContextThread();
        owner.Context.GetLane(LanePriority.Lease).SynchronizationContext.Post(_ => throw new TimeoutException("posted"), null);

        var completion = async () => await owner.Completion.WaitAsync(Bounded.Generous);

        await completion.Should().ThrowAsync<TimeoutException>().WithMessage("posted");
        await owner.DisposeAsync();
    }

    [Fact]
    public async Task TheThread_IsABackgroundThreadNamedAfterTheContext_AndDisposeWaitsForItsExit()
    {
        var owner = new PriorityAsyncContextThread(new PrioritySchedulerOptions { Name = "owned-thread" });
        var (name, background) = await owner.RunAsync(LanePriority.Processing, () => Task.FromResult((Thread.CurrentThread.Name, Thread.CurrentThread.IsBackground))).WaitAsync(Bounded.Generous);

        owner.Dispose();

        (name, background).Should().Be(("owned-thread", true));
        owner.Completion.IsCompletedSuccessfully.Should().BeTrue("Dispose returns once the thread has run its last item and exited");
    }
}
