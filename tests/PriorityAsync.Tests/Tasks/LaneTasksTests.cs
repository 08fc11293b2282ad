namespace PriorityAsync.Tests.Tasks;

/// <summary>
/// The lane-safe combinators (<see cref="LaneTasks"/>): they complete through <c>await</c> continuations posted to the
/// caller's lane — not through the thread pool, as <see cref="Task.WhenAny(Task[])"/> does for a task created with
/// <see cref="TaskCreationOptions.RunContinuationsAsynchronously"/> — and they never fault. Orderings and threads only.
/// </summary>
public class LaneTasksTests
{
    [Fact]
    public void WhenEitherAsync_IsAlreadyComplete_WhenEitherTaskIs()
    {
        var pending = new TaskCompletionSource().Task;

        LaneTasks.WhenEitherAsync(Task.CompletedTask, pending).IsCompletedSuccessfully.Should().BeTrue();
        LaneTasks.WhenEitherAsync(pending, Task.FromException(new InvalidOperationException())).IsCompletedSuccessfully.Should().BeTrue();
        LaneTasks.WhenEitherAsync(pending, pending).IsCompleted.Should().BeFalse();
    }

    [Fact]
    public void WhenEitherAsync_CompletesInTheCallersLane_WhenOneTaskFaultsOnAnotherThread_AndNeverFaults()
    {
        var (awaitedOn, contextThread, either) = RunInContext(async () =>
        {
            var first = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var never = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var combined = LaneTasks.WhenEitherAsync(first.Task, never.Task);
            combined.IsCompleted.Should().BeFalse("neither task has completed");

            _ = Task.Run(() => first.SetException(new InvalidOperationException("the watched task failed")));
            await combined;
            return (Environment.CurrentManagedThreadId, combined);
        });

        awaitedOn.Should().Be(contextThread, "the combinator's completion runs in the caller's lane");
        either.IsCompletedSuccessfully.Should().BeTrue("a watched task's failure is not the combinator's");
    }

    [Fact]
    public void WhenAllAsync_WaitsForEveryTask_InTheCallersLane_AndNeverFaults()
    {
        var (awaitedOn, contextThread, all) = RunInContext(async () =>
        {
            var sources = Enumerable.Range(0, 3).Select(_ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
            var combined = LaneTasks.WhenAllAsync(sources.Select(s => s.Task).ToArray());

            sources[0].SetResult();
            sources[2].SetCanceled();
            combined.IsCompleted.Should().BeFalse("one task is still running");

            _ = Task.Run(() => sources[1].SetException(new InvalidOperationException("the last one failed")));
            await combined;
            return (Environment.CurrentManagedThreadId, combined);
        });

        awaitedOn.Should().Be(contextThread);
        all.IsCompletedSuccessfully.Should().BeTrue("canceled and failed tasks end the wait without faulting it");
    }

    private static (int AwaitedOn, int ContextThread, Task Combined) RunInContext(Func<Task<(int, Task)>> body)
    {
        var contextThread = -1;
        var result = Bounded.Run(async () =>
        {
            contextThread = Environment.CurrentManagedThreadId;
            return await body();
        });
        return (result.Item1, contextThread, result.Item2);
    }
}
