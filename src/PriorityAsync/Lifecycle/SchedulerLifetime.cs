using System.Diagnostics;

namespace PriorityAsync;

/// <summary>
/// The lifetime of a <see cref="PriorityScheduler"/>, the one place its state and transitions live: whether and from
/// where it takes work (<see cref="AcceptanceState"/>: accepting, shutting down, finished, disposed), whether its own
/// threads may still queue work while it closes, and whether its disposal was asked for. The states only move forward,
/// <see cref="AcceptanceState.Open"/> → <see cref="AcceptanceState.Draining"/> → <see cref="AcceptanceState.Closing"/>
/// → <see cref="AcceptanceState.Closed"/> → <see cref="AcceptanceState.Disposed"/>, some skipped; a scheduler reaches
/// <see cref="AcceptanceState.Disposed"/> exactly when it has finished and its disposal was asked for, in whichever
/// order the two happen.
/// </summary>
/// <remarks>
/// The transitions take the scheduler's gate (they may be called with it held); the reads take no lock, and every
/// transition is a full fence, so an enqueue that has not yet announced itself sees the new state.
/// </remarks>
[DebuggerDisplay("{_state}, dispose requested {_disposeRequested}, closing takes own work {_closingTakesOwnWork}")]
internal sealed class SchedulerLifetime
{
    private readonly PriorityScheduler _owner;
    private readonly object _gate;
    private volatile AcceptanceState _state;

    // True only while Closing, while the scheduler's own threads may still queue work (a context's final drain).
    private volatile bool _closingTakesOwnWork;

    // Changed and read under the gate only.
    private bool _disposeRequested;

    /// <summary>Creates the lifetime of <paramref name="owner"/>, whose state <paramref name="gate"/> guards.</summary>
    /// <param name="owner">The scheduler: its threads are the ones that may still start work while it shuts down.</param>
    /// <param name="gate">The scheduler's lock.</param>
    public SchedulerLifetime(PriorityScheduler owner, object gate)
    {
        _owner = owner;
        _gate = gate;
    }

    /// <summary>Gets the state.</summary>
    public AcceptanceState State => _state;

    /// <summary>Gets whether the scheduler has finished (closed or disposed): no worker runs its lanes any more.</summary>
    public bool HasFinished => _state >= AcceptanceState.Closed;

    /// <summary>
    /// Gets whether the scheduler is closing or has finished: nothing more is queued (but what its own threads queue
    /// while <see cref="TryClose"/> lets them), and its workers run what is queued and stop.
    /// </summary>
    public bool IsClosing => _state >= AcceptanceState.Closing;

    /// <summary>
    /// Gets whether a continuation, post or timer firing from the calling thread is queued rather than rejected: from
    /// any thread until the scheduler closes, then from its own threads while the close lets them.
    /// </summary>
    public bool AcceptsQueuedWorkFromCallingThread => _state switch
    {
        AcceptanceState.Open or AcceptanceState.Draining => true,
        AcceptanceState.Closing => _closingTakesOwnWork && _owner.IsWorkerThread,
        _ => false,
    };

    /// <summary>
    /// Throws when the scheduler takes no new work (<see cref="Lane.Run(Func{Task})"/>) from the calling thread:
    /// <see cref="ObjectDisposedException"/> after disposal, <see cref="InvalidOperationException"/> once it has
    /// finished, or while it shuts down and the caller is not one of its own threads.
    /// </summary>
    public void ThrowIfNotAcceptingNewWork()
    {
        switch (_state)
        {
            case AcceptanceState.Open:
                return;
            case AcceptanceState.Draining when _owner.IsWorkerThread:
                return;
            case AcceptanceState.Closing when _closingTakesOwnWork && _owner.IsWorkerThread:
                return;
            case AcceptanceState.Disposed:
                throw new ObjectDisposedException(_owner.ToString(), $"{_owner} has been disposed and accepts no new work.");
            case AcceptanceState.Draining:
            case AcceptanceState.Closing:
                throw new InvalidOperationException($"{_owner} is shutting down and accepts new work only from its own threads.");
            default:
                throw new InvalidOperationException($"{_owner} has finished running and accepts no new work.");
        }
    }

    /// <summary>
    /// Begins a graceful stop, <see cref="AcceptanceState.Open"/> → <see cref="AcceptanceState.Draining"/>: new work is
    /// taken only from the scheduler's own threads, continuations and posts still from any.
    /// </summary>
    /// <returns>Whether this call began it (false once the scheduler is past <see cref="AcceptanceState.Open"/>).</returns>
    public bool TryBeginDraining()
    {
        lock (_gate)
        {
            if (_state != AcceptanceState.Open)
            {
                return false;
            }

            MoveLocked(AcceptanceState.Draining);
            return true;
        }
    }

    /// <summary>
    /// Closes the scheduler, <see cref="AcceptanceState.Open"/> or <see cref="AcceptanceState.Draining"/> →
    /// <see cref="AcceptanceState.Closing"/>: nothing more is queued, the items already queued still run.
    /// </summary>
    /// <param name="takesOwnWork">
    /// Whether the scheduler's own threads may still queue work until <see cref="StopTakingOwnWork"/> (a context's final
    /// drain keeps the work its own items post on its thread).
    /// </param>
    /// <returns>Whether this call closed it (false once it is closing or finished).</returns>
    public bool TryClose(bool takesOwnWork = false)
    {
        lock (_gate)
        {
            if (IsClosing)
            {
                return false;
            }

            _closingTakesOwnWork = takesOwnWork;
            MoveLocked(AcceptanceState.Closing);
            return true;
        }
    }

    /// <summary>From now on, work that the scheduler's own threads queue while it closes is rejected like any late work.</summary>
    public void StopTakingOwnWork()
    {
        lock (_gate)
        {
            _closingTakesOwnWork = false;
            AssertInvariantsLocked();
        }
    }

    /// <summary>
    /// Marks the scheduler finished, from whatever state before: <see cref="AcceptanceState.Closed"/>, or
    /// <see cref="AcceptanceState.Disposed"/> when its disposal was asked for already. The caller, and only it, then
    /// rejects the stragglers and completes the stop.
    /// </summary>
    /// <returns>Whether this call finished it (false once it has finished).</returns>
    public bool TryFinish()
    {
        lock (_gate)
        {
            if (HasFinished)
            {
                return false;
            }

            _closingTakesOwnWork = false;
            MoveLocked(_disposeRequested ? AcceptanceState.Disposed : AcceptanceState.Closed);
            return true;
        }
    }

    /// <summary>
    /// Records that the scheduler's disposal was asked for: a scheduler that has finished is
    /// <see cref="AcceptanceState.Disposed"/> at once, any other when <see cref="TryFinish"/> finishes it.
    /// </summary>
    /// <returns>Whether this call moved a finished scheduler to <see cref="AcceptanceState.Disposed"/>.</returns>
    public bool RequestDispose()
    {
        lock (_gate)
        {
            _disposeRequested = true;
            if (_state != AcceptanceState.Closed)
            {
                AssertInvariantsLocked();
                return false;
            }

            MoveLocked(AcceptanceState.Disposed);
            return true;
        }
    }

    /// <inheritdoc />
    public override string ToString() => _state.ToString();

    private void MoveLocked(AcceptanceState next)
    {
        Debug.Assert(next > _state, $"The lifetime only moves forward: {_state} -> {next}.");
        _state = next;
        Interlocked.MemoryBarrier();
        AssertInvariantsLocked();
    }

    /// <summary>
    /// Checks, in debug builds and under the gate, that the state agrees with itself: own work is taken only while
    /// closing, and a finished scheduler is disposed exactly when its disposal was asked for.
    /// </summary>
    [Conditional("DEBUG")]
    private void AssertInvariantsLocked()
    {
        Debug.Assert(Monitor.IsEntered(_gate), "The lifetime is checked under the scheduler's gate.");
        Debug.Assert(Enum.IsDefined(_state), $"The lifetime is in a known state ({_state}).");
        Debug.Assert(!_closingTakesOwnWork || _state == AcceptanceState.Closing, $"Own work is taken only while closing, not while {_state}.");
        Debug.Assert(_state != AcceptanceState.Disposed || _disposeRequested, "A disposed scheduler is one whose disposal was asked for.");
        Debug.Assert(_state != AcceptanceState.Closed || !_disposeRequested, "A finished scheduler whose disposal was asked for is disposed.");
    }
}
