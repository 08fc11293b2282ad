using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>
/// The <c>Completion</c> of a scheduler that stops on request (<see cref="PriorityTaskScheduler"/>,
/// <see cref="HostedPriorityScheduler"/>): the exceptions reported until it has stopped, and the task that completes,
/// or faults with all of them, once its finisher (the one that won <see cref="SchedulerLifetime.TryFinish"/>) is done.
/// </summary>
internal sealed class SchedulerCompletion
{
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly ConcurrentQueue<Exception> _exceptions = new();

    /// <summary>Gets the task that completes when the scheduler has stopped, faulted with the exceptions reported until then.</summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the scheduler's finisher.")]
    public Task Task => _completion.Task;

    /// <summary>Adds <paramref name="exception"/> to those <see cref="Task"/> faults with. Safe from any thread.</summary>
    /// <param name="exception">What the work, or the host, threw.</param>
    public void Report(Exception exception) => _exceptions.Enqueue(exception);

    /// <summary>Completes <see cref="Task"/>: successfully when nothing was reported, otherwise faulted with everything reported.</summary>
    public void Complete()
    {
        if (_exceptions.IsEmpty)
        {
            _completion.TrySetResult();
        }
        else
        {
            _completion.TrySetException(_exceptions);
        }
    }

    /// <summary>
    /// Blocks until the scheduler has stopped, without throwing what was reported, unless the caller is
    /// <paramref name="onTheSchedulersThread"/>: the stop needs that thread, so there the call returns at once.
    /// </summary>
    /// <param name="onTheSchedulersThread">Whether the caller runs on a thread the stop needs.</param>
    [SuppressMessage("Usage", "VSTHRD002:Avoid problematic synchronous waits", Justification = "A synchronous Dispose that waits is the schedulers' documented contract (like Thread.Join); on a thread the stop needs it does not wait, so a scheduler never waits for itself.")]
    public void WaitUnless(bool onTheSchedulersThread)
    {
        if (!onTheSchedulersThread)
        {
            _completion.Task.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing).GetAwaiter().GetResult();
        }
    }

    /// <summary>
    /// Returns a task that completes, without the exceptions reported, when the scheduler has stopped, or at once when
    /// the caller is <paramref name="onTheSchedulersThread"/> (whose own work is part of what the stop waits for).
    /// </summary>
    /// <param name="onTheSchedulersThread">Whether the caller runs on a thread whose work the stop waits for.</param>
    /// <returns>The task.</returns>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "Awaits the task of this type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the scheduler's finisher.")]
    public async ValueTask WaitUnlessAsync(bool onTheSchedulersThread)
    {
        if (!onTheSchedulersThread)
        {
            await _completion.Task.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }
}
