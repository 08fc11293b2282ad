using System.Runtime.CompilerServices;

namespace PriorityAsync.Messaging;

public sealed partial class MessagePump
{
    /// <summary>Receives while running, in the receive lane, only when there is spare capacity.</summary>
    private async Task ReceiveLoopAsync(CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            if (WaitForCapacity() is { } capacity)
            {
                await capacity;
                continue;
            }

            if (Scheduler.ShouldYield)
            {
                // More urgent work is ready: go to the back of the receive lane and look again after it ran.
                await ReceiveLane.SwitchTo();
                continue;
            }

            ILeasedMessage? message;
            try
            {
                message = await ReceiveAndKeepAsync(stop);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                break;
            }
            catch (Exception ex)
            {
                MessagePumpLog.ReceiveFailed(_logger, ex, Name, _options.EmptyReceiveDelay);
                await PauseAsync(_options.EmptyReceiveDelay, stop);
                continue;
            }

            if (message is null)
            {
                await PauseAsync(_options.EmptyReceiveDelay, stop);
            }
        }
    }

    /// <summary>
    /// Receives from the lease lane and starts the message's lease keeper and handler there. The decision to ask
    /// was taken in the receive lane (spare capacity); once the broker answers, the message holds a lock whose clock
    /// is running, so taking the answer is lease work: it runs ahead of every processing continuation, and the
    /// keeper is scheduled within one slice of the answer. The receive loop itself resumes in the receive lane.
    /// </summary>
    private Task<ILeasedMessage?> ReceiveAndKeepAsync(CancellationToken stop) =>
        LeaseLane.Run(async () =>
        {
            var message = await _source.ReceiveAsync(stop);
            if (message is not null)
            {
                Start(message);
            }

            return message;
        });

    /// <summary>Returns a task to wait on when the pump is at capacity, or <see langword="null"/> when it may receive.</summary>
    private Task? WaitForCapacity()
    {
        lock (_gate)
        {
            if (_inFlight.Count < MaxInFlight || _state != State.Running)
            {
                return null;
            }

            _capacityWaiter ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return _capacityWaiter.Task;
        }
    }

    /// <summary>Wakes the receive loop if it waits for capacity. Call under the lock.</summary>
    private void SignalCapacityLocked()
    {
        _capacityWaiter?.TrySetResult();
        _capacityWaiter = null;
    }

    /// <summary>Registers a received message and starts its lease keeper and its handler.</summary>
    private void Start(ILeasedMessage message)
    {
        var context = new MessageContext(this, message);
        lock (_gate)
        {
            _inFlight.Add(context);
            if (_inFlight.Count > _peakInFlight)
            {
                Volatile.Write(ref _peakInFlight, _inFlight.Count);
            }
        }

        Interlocked.Increment(ref _received);
        var tags = MessagePumpMetrics.Tags(Name);
        MessagePumpMetrics.Consumed.Add(1, tags);
        MessagePumpMetrics.InFlight.Add(1, tags);
        MessagePumpLog.Received(_logger, Name, message.MessageId, message.DeliveryCount, message.LockedUntil);
        _ = LeaseLane.Run(() => KeepLeaseAsync(context));
        _ = ProcessingLane.Run(() => ProcessAsync(context));
    }

    /// <summary>
    /// Waits on the pump's clock and resumes in the current lane; returns early and quietly when
    /// <paramref name="cancellationToken"/> fires. The continuation is posted to the lane by the thread that completes
    /// the delay (no hop through the thread pool, which would let a virtual clock run ahead of it).
    /// </summary>
    private ConfiguredTaskAwaitable PauseAsync(TimeSpan delay, CancellationToken cancellationToken) =>
        Task.Delay(delay, TimeProvider, cancellationToken)
            .ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
}
