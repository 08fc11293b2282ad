namespace PriorityAsync.Reliability.Tests.Core;

/// <summary>One scheduler of a <see cref="SchedulerKind"/>, with a uniform way to stop it.</summary>
internal sealed class SchedulerUnderTest : IAsyncDisposable
{
    private readonly PriorityAsyncContextThread? _thread;
    private readonly PriorityTaskScheduler? _tasks;

    public SchedulerUnderTest(SchedulerKind kind, TimeSpan shutdownTimeout)
    {
        if (kind == SchedulerKind.ContextThread)
        {
            _thread = new PriorityAsyncContextThread(new PrioritySchedulerOptions { ShutdownTimeout = shutdownTimeout });
            Scheduler = _thread.Context;
        }
        else
        {
            _tasks = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions
            {
                WorkerCount = 2,
                Mode = kind == SchedulerKind.Dedicated ? PriorityWorkerMode.DedicatedThreads : PriorityWorkerMode.ThreadPool,
                ShutdownTimeout = shutdownTimeout,
            });
            Scheduler = _tasks;
        }
    }

    public PriorityScheduler Scheduler { get; }

    /// <summary>Stops gracefully (<c>Complete</c> or <c>JoinAsync</c>) or by disposal, and returns the task of the stop.</summary>
    public Task StopAsync(bool dispose) => (_thread, _tasks, dispose) switch
    {
        ({ } thread, _, false) => thread.JoinAsync(),
        ({ } thread, _, true) => thread.DisposeAsync().AsTask(),
        (_, { } tasks, false) => CompleteAsync(tasks),
        (_, { } tasks, true) => tasks.DisposeAsync().AsTask(),
        _ => throw new InvalidOperationException("No scheduler."),
    };

    public async ValueTask DisposeAsync()
    {
        if (_thread is not null)
        {
            await _thread.DisposeAsync();
        }

        if (_tasks is not null)
        {
            await _tasks.DisposeAsync();
        }
    }

    private static Task CompleteAsync(PriorityTaskScheduler tasks)
    {
        tasks.Complete();
        return tasks.Completion;
    }
}
