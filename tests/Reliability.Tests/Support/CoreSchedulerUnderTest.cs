namespace PriorityAsync.Reliability.Tests.Support;

/// <summary>The core schedulers the scenarios run against, created the same way everywhere.</summary>
internal sealed class CoreSchedulerUnderTest : IDisposable
{
    private readonly IDisposable _owner;
    private readonly Func<Task> _completion;

    private CoreSchedulerUnderTest(string kind, PriorityScheduler scheduler, IDisposable owner, Func<Task> completion, bool oneAtATime)
    {
        Kind = kind;
        Scheduler = scheduler;
        _owner = owner;
        _completion = completion;
        OneAtATime = oneAtATime;
    }

    public const string Dedicated1 = "dedicated-1";
    public const string Dedicated4 = "dedicated-4";
    public const string Pool1 = "threadpool-1";
    public const string Pool3 = "threadpool-3";
    public const string ContextThread = "context-thread";

    public string Kind { get; }

    public PriorityScheduler Scheduler { get; }

    /// <summary>Gets whether one item runs at a time (FIFO and the dispatch rule are then checkable).</summary>
    public bool OneAtATime { get; }

    public Task Completion => _completion();

    public static CoreSchedulerUnderTest Create(string kind, TimeSpan? shutdownTimeout = null)
    {
        var timeout = shutdownTimeout ?? TimeSpan.FromSeconds(30);
        switch (kind)
        {
            case ContextThread:
                var thread = new PriorityAsyncContextThread(new PrioritySchedulerOptions { Name = kind, ShutdownTimeout = timeout });
                return new(kind, thread.Context, thread, () => thread.Completion, oneAtATime: true);
            default:
                var workers = int.Parse(kind[(kind.LastIndexOf('-') + 1)..]);
                var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions
                {
                    Name = kind,
                    WorkerCount = workers,
                    Mode = kind.StartsWith("dedicated", StringComparison.Ordinal) ? PriorityWorkerMode.DedicatedThreads : PriorityWorkerMode.ThreadPool,
                    ShutdownTimeout = timeout,

                    // One worker and no reserved lease worker: items run one at a time, so FIFO and the dispatch rule are
                    // checkable. With more workers the default reserved worker is exercised too.
                    ReservedWorkerCount = workers == 1 ? 0 : 1,
                });
                return new(kind, scheduler, scheduler, () => scheduler.Completion, oneAtATime: workers == 1);
        }
    }

    /// <summary>Stops it the way the scenario drew: dispose, or complete (join) without waiting.</summary>
    public void Stop(bool dispose)
    {
        if (dispose)
        {
            _owner.Dispose();
        }
        else if (_owner is PriorityTaskScheduler scheduler)
        {
            scheduler.Complete();
        }
        else
        {
            _ = ((PriorityAsyncContextThread)_owner).JoinAsync();
        }
    }

    public void Dispose() => _owner.Dispose();
}
