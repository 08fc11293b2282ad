using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>
/// <c>WhenAny</c>/<c>WhenAll</c> that stay in the caller's lane. <see cref="Task.WhenAny(Task[])"/> and
/// <see cref="Task.WhenAll(Task[])"/> complete through the thread pool when a task they watch was created with
/// <see cref="TaskCreationOptions.RunContinuationsAsynchronously"/>; on a <see cref="VirtualTimeProvider"/> the clock
/// jumps to its next timer while that hop is under way. These helpers complete through <c>await</c> continuations
/// instead, which the runtime posts to the current lane.
/// </summary>
internal static class LaneTasks
{
    private const ConfigureAwaitOptions InLane = ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext;

    /// <summary>Completes when <paramref name="first"/> or <paramref name="second"/> completes; never faults.</summary>
    public static Task WhenEitherAsync(Task first, Task second)
    {
        if (first.IsCompleted || second.IsCompleted)
        {
            return Task.CompletedTask;
        }

        var either = new TaskCompletionSource();
        _ = ForwardAsync(first, either);
        _ = ForwardAsync(second, either);
        return either.Task;
    }

    /// <summary>Completes when every task has completed; never faults.</summary>
    public static async Task WhenAllAsync(IEnumerable<Task> tasks)
    {
        foreach (var task in tasks)
        {
            await task.ConfigureAwait(InLane);
        }
    }

    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The tasks forwarded are the caller's own (a message pump's receive loop, settle calls and clock delays); only their completion is forwarded. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    private static async Task ForwardAsync(Task task, TaskCompletionSource either)
    {
        await task.ConfigureAwait(InLane);
        either.TrySetResult();
    }
}
