namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>
/// Runs a body on a context's thread and blocks the calling (benchmark) thread until it has finished. Reusable, so one
/// call allocates nothing of its own; its fixed cost is amortised over the many dispatches the body performs.
/// </summary>
public sealed class CrossThreadInvoker : IDisposable
{
    private static readonly SendOrPostCallback s_runAction = static s => ((CrossThreadInvoker)s!).RunAction();
    private static readonly SendOrPostCallback s_startAsync = static s => ((CrossThreadInvoker)s!).StartAsync();

    private readonly ManualResetEventSlim _done = new();
    private readonly Action _signalDone;
    private Action? _action;
    private Func<Task>? _asyncBody;
    private Task? _asyncTask;

    /// <summary>Creates an invoker.</summary>
    public CrossThreadInvoker() => _signalDone = _done.Set;

    /// <summary>Runs <paramref name="action"/> on <paramref name="context"/> and waits for it.</summary>
    public void Invoke(SynchronizationContext context, Action action)
    {
        _action = action;
        _done.Reset();
        context.Post(s_runAction, this);
        _done.Wait();
    }

    /// <summary>Starts <paramref name="body"/> on <paramref name="context"/> and waits until its task has completed; rethrows its exception.</summary>
    public void InvokeAsync(SynchronizationContext context, Func<Task> body)
    {
        _asyncBody = body;
        _done.Reset();
        context.Post(s_startAsync, this);
        _done.Wait();
        _asyncTask!.GetAwaiter().GetResult();
    }

    /// <inheritdoc />
    public void Dispose() => _done.Dispose();

    private void RunAction()
    {
        _action!();
        _done.Set();
    }

    private void StartAsync()
    {
        _asyncTask = _asyncBody!();
        _asyncTask.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_signalDone);
    }
}
