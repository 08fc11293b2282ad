using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Lanes;

/// <summary>
/// The internal work-item entry point (<see cref="Lane.StartTracked"/>, <see cref="Lane.Post"/>) the pump starts each
/// message with: it runs in the lane, a graceful stop waits for it until its owner ends it, it is refused where
/// <see cref="Lane.Run(Func{Task})"/> is, and a step posted after the stop is rejected like any post.
/// </summary>
public class LaneWorkItemTests
{
    [Fact]
    public async Task StartTracked_RunsInTheLane_AndAGracefulStopWaitsUntilTheOwnerEndsIt()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        var lane = scheduler.GetLane(LanePriority.Processing);
        var item = new RecordingItem();

        lane.StartTracked(item);
        (await item.Ran.Task.WaitAsync(Bounded.Generous)).Should().Be("Processing");
        scheduler.Complete();
        await Task.Delay(50);
        scheduler.Completion.IsCompleted.Should().BeFalse("the tracked work has not ended");

        lane.EndTracked();
        await scheduler.Completion.WaitAsync(Bounded.Generous);
        scheduler.RejectedWorkCount.Should().Be(0);
    }

    [Fact]
    public async Task StartTracked_AfterTheStop_ThrowsLikeRun_AndRunsNothing_ButAPostedStepRunsOnThePool_AsARejectedPost()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        var lane = scheduler.GetLane(LanePriority.Lease);
        var kinds = new List<RejectedWorkKind>();
        scheduler.RejectedWork += (_, e) =>
        {
            lock (kinds)
            {
                kinds.Add(e.Kind);
            }
        };
        scheduler.Complete();
        await scheduler.Completion.WaitAsync(Bounded.Generous);

        var refused = new RecordingItem();
        ((Action)(() => lane.StartTracked(refused))).Should().Throw<InvalidOperationException>().WithMessage("*has finished running*");
        ((Action)(() => lane.StartTracked(null!))).Should().Throw<ArgumentNullException>().WithParameterName("workItem");
        ((Action)(() => lane.Post(null!))).Should().Throw<ArgumentNullException>().WithParameterName("workItem");
        refused.Ran.Task.IsCompleted.Should().BeFalse();

        var late = new RecordingItem();
        lane.Post(late);
        (await late.Ran.Task.WaitAsync(Bounded.Generous)).Should().BeNull("a rejected item runs on the thread pool, outside the lane");
        scheduler.RejectedWorkCount.Should().Be(1);
        lock (kinds)
        {
            kinds.Should().Equal(RejectedWorkKind.Post);
        }
    }

    private sealed class RecordingItem : ILaneWorkItem
    {
        public TaskCompletionSource<string?> Ran { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Execute() => Ran.TrySetResult(PriorityScheduler.CurrentLane?.Name);
    }
}
