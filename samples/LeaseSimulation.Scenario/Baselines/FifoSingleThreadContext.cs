using System.Runtime.ExceptionServices;
using PriorityAsync;

namespace LeaseSimulation.Baselines;

/// <summary>
/// A plain single-thread <see cref="SynchronizationContext"/>: one FIFO queue, one thread, no priorities. It stands
/// in for a WinForms UI thread or an asyncio loop (the shape of Nito.AsyncEx's <c>AsyncContext</c>), and is the
/// baseline PriorityAsync is compared with.
/// </summary>
/// <remarks>
/// With a <see cref="VirtualTimeProvider"/>, the loop jumps the clock to the next due timer whenever its queue is
/// empty. Timer callbacks then run with no synchronization context, so continuations they release are posted to
/// the queue (never run inline), exactly as they would be on a real UI thread.
/// </remarks>
public sealed class FifoSingleThreadContext : SynchronizationContext
{
    private readonly object _gate = new();
    private readonly Queue<(SendOrPostCallback Callback, object? State)> _queue = new();
    private readonly VirtualTimeProvider? _clock;
    private ExceptionDispatchInfo? _failure;
    private bool _entryCompleted;
    private bool _waiting;
    private int _outstandingOperations;

    private FifoSingleThreadContext(VirtualTimeProvider? clock)
    {
        _clock = clock;
    }

    /// <summary>Gets how many callbacks this context has run.</summary>
    public long DispatchedCount { get; private set; }

    /// <summary>Runs <paramref name="entry"/> on the calling thread until it completes, with every continuation on that thread in FIFO order.</summary>
    /// <param name="entry">The async entry point.</param>
    /// <param name="clock">A virtual clock to drive when idle, or <see langword="null"/> for real time.</param>
    public static void Run(Func<Task> entry, VirtualTimeProvider? clock = null) =>
        Run<bool>(async () =>
        {
            await entry().ConfigureAwait(true);
            return true;
        }, clock);

    /// <summary>Runs <paramref name="entry"/> on the calling thread until it completes, with every continuation on that thread in FIFO order.</summary>
    /// <typeparam name="T">The result type.</typeparam>
    /// <param name="entry">The async entry point.</param>
    /// <param name="clock">A virtual clock to drive when idle, or <see langword="null"/> for real time.</param>
    /// <returns>The entry point's result.</returns>
    public static T Run<T>(Func<Task<T>> entry, VirtualTimeProvider? clock = null)
    {
        ArgumentNullException.ThrowIfNull(entry);
        var context = new FifoSingleThreadContext(clock);
        var previous = Current;
        SetSynchronizationContext(context);
        try
        {
            var task = entry();
            task.ContinueWith(static (_, s) => ((FifoSingleThreadContext)s!).OnEntryCompleted(), context, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            context.Loop();
            return task.GetAwaiter().GetResult();
        }
        finally
        {
            SetSynchronizationContext(previous);
        }
    }

    /// <inheritdoc />
    public override void Post(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        lock (_gate)
        {
            _queue.Enqueue((d, state));
            if (_waiting)
            {
                Monitor.Pulse(_gate);
            }
        }
    }

    /// <inheritdoc />
    public override void Send(SendOrPostCallback d, object? state) =>
        throw new NotSupportedException("FifoSingleThreadContext does not support Send; use Post.");

    /// <inheritdoc />
    public override SynchronizationContext CreateCopy() => this;

    /// <inheritdoc />
    public override void OperationStarted() => Interlocked.Increment(ref _outstandingOperations);

    /// <inheritdoc />
    public override void OperationCompleted()
    {
        if (Interlocked.Decrement(ref _outstandingOperations) == 0)
        {
            Post(static _ => { }, null);
        }
    }

    private void OnEntryCompleted()
    {
        lock (_gate)
        {
            _entryCompleted = true;
            Monitor.Pulse(_gate);
        }
    }

    private void Loop()
    {
        while (true)
        {
            (SendOrPostCallback Callback, object? State) item;
            var advance = false;
            lock (_gate)
            {
                while (!_queue.TryDequeue(out item))
                {
                    if (_entryCompleted && Volatile.Read(ref _outstandingOperations) == 0)
                    {
                        return;
                    }

                    if (_clock?.NextTimerDue is not null)
                    {
                        advance = true;
                        break;
                    }

                    _waiting = true;
                    Monitor.Wait(_gate);
                    _waiting = false;
                }
            }

            if (advance)
            {
                AdvanceClockWithoutContext(_clock!);
                continue;
            }

            try
            {
                DispatchedCount++;
                item.Callback(item.State);
            }
            catch (Exception ex)
            {
                _failure ??= ExceptionDispatchInfo.Capture(ex);
            }

            _failure?.Throw();
        }
    }

    /// <summary>Fires the next due timers with no synchronization context, so released continuations are posted, not inlined.</summary>
    private static void AdvanceClockWithoutContext(VirtualTimeProvider clock)
    {
        var current = Current;
        SetSynchronizationContext(null);
        try
        {
            clock.TryAdvanceToNextTimer();
        }
        finally
        {
            SetSynchronizationContext(current);
        }
    }
}
