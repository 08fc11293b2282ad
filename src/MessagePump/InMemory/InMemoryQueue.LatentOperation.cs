using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

public sealed partial class InMemoryQueue
{
    /// <summary>One broker call delayed by the queue's latency: a timer of the broker's clock runs it and completes the task.</summary>
    private sealed class LatentOperation<TState, TResult>
    {
        private const int Pending = 0;
        private const int Started = 1;
        private const int Canceled = 2;

        private readonly TaskCompletionSource<TResult> _completion = new();
        private readonly Func<TState, TResult> _operation;
        private readonly TState _state;
        private readonly ITimer _timer;
        private readonly CancellationTokenRegistration _registration;
        private int _phase;

        public LatentOperation(Func<TState, TResult> operation, TState state, TimeProvider clock, TimeSpan latency, CancellationToken cancellationToken)
        {
            _operation = operation;
            _state = state;
            _timer = clock.CreateTimer(static s => ((LatentOperation<TState, TResult>)s!).Run(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            _registration = cancellationToken.UnsafeRegister(static (s, token) => ((LatentOperation<TState, TResult>)s!).Cancel(token), this);
            _timer.Change(latency, Timeout.InfiniteTimeSpan);
        }

        [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of this operation's own TaskCompletionSource, completed only by its timer callback or cancellation. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
        public Task<TResult> Task => _completion.Task;

        private void Run()
        {
            _timer.Dispose();
            if (Interlocked.CompareExchange(ref _phase, Started, Pending) != Pending)
            {
                return;
            }

            _registration.Dispose();

            try
            {
                _completion.TrySetResult(_operation(_state));
            }
            catch (Exception ex)
            {
                _completion.TrySetException(ex);
            }
        }

        private void Cancel(CancellationToken token)
        {
            if (Interlocked.CompareExchange(ref _phase, Canceled, Pending) == Pending)
            {
                _timer.Dispose();
                _completion.TrySetCanceled(token);
            }
        }
    }
}
