using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>
    /// Receives while running, in the receive lane, only when there is spare capacity; each receive asks for as many
    /// messages as <see cref="ReceiveAdmission"/> allows within the free in-flight slots.
    /// </summary>
    private async Task ReceiveLoopAsync(CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            var capacity = WaitForCapacityAsync();
            if (capacity is not null)
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

            var asked = _admission.NextAsk(FreeSlots());
            var sent = TimeProvider.GetTimestamp();
            var answer = await ReceiveOrPauseAsync(asked, stop);
            if (answer is null)
            {
                continue;
            }

            var (received, answeredAt) = answer.Value;
            _events.ReceiveSucceeded();
            _admission.Observe(asked, received, TimeProvider.GetElapsedTime(sent, answeredAt), TimeProvider.GetElapsedTime(answeredAt));
            if (received == 0)
            {
                using var wake = CancellationTokenSource.CreateLinkedTokenSource(stop);
                Volatile.Write(ref _pauseWake, wake);
                await PauseAsync(_options.EmptyReceiveDelay, wake.Token);
                Interlocked.CompareExchange(ref _pauseWake, null, wake);
            }
        }
    }

    /// <summary>
    /// One receive call and its failure: the answer, or <see langword="null"/> when the pump is stopping (the call
    /// was canceled) or the call failed (logged, then a pause of <see cref="MessagePumpOptions.EmptyReceiveDelay"/>).
    /// </summary>
    private async Task<ReceiveAnswer?> ReceiveOrPauseAsync(int asked, CancellationToken stop)
    {
        try
        {
            return await ReceiveAndKeepAsync(asked, stop);
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            return null;
        }
        catch (Exception ex)
        {
            _events.ReceiveFailed(ex, _options.EmptyReceiveDelay, TimeProvider.GetUtcNow());
            await PauseAsync(_options.EmptyReceiveDelay, stop);
            return null;
        }
    }

    /// <summary>
    /// Receives from the lease lane and starts each message's lease keeper and handler there. The decision to ask
    /// was taken in the receive lane (spare capacity); once the broker answers, the messages hold locks whose clocks
    /// are running, so taking the answer is lease work: it runs ahead of every processing continuation, and every
    /// keeper of the batch is scheduled within one slice of the answer. The receive loop itself resumes in the
    /// receive lane.
    /// </summary>
    private Task<ReceiveAnswer> ReceiveAndKeepAsync(int asked, CancellationToken stop) =>
        LeaseLane.Run(async () =>
        {
            lock (_gate)
            {
                if (_state != State.Running)
                {
                    // The stop began after the receive loop decided to ask: ask nothing (the stop waits only for a
                    // receive call that had begun, see ReceiveCallEndedAsync).
                    return new ReceiveAnswer(0, TimeProvider.GetTimestamp());
                }

                Debug.Assert(!_receiveCallUnderWay, "one receive call at a time: the receive loop awaits each");
                _receiveCallUnderWay = true;
            }

            try
            {
                return await ReceiveAndStartAsync(asked, stop);
            }
            finally
            {
                TaskCompletionSource? ended;
                lock (_gate)
                {
                    _receiveCallUnderWay = false;
                    ended = _receiveCallEnded;
                    _receiveCallEnded = null;
                }

                ended?.TrySetResult();
            }
        });

    /// <summary>
    /// Completes when no receive call is under way: at once, or when the one under way has started its messages. A
    /// receive call that begins later asks for nothing (the pump is no longer running). The task completes from the
    /// lease lane, so a stop waiting for it never waits for the receive lane, which handlers busy with CPU work may keep
    /// from running for as long as they run.
    /// </summary>
    private Task ReceiveCallEndedAsync()
    {
        lock (_gate)
        {
            Debug.Assert(_state != State.Running, "called by the stop path, once the pump no longer runs");
            return _receiveCallUnderWay
                ? (_receiveCallEnded ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task
                : Task.CompletedTask;
        }
    }

    /// <summary>The receive call itself, in the lease lane: asks the source, then starts each message it locked.</summary>
    private async Task<ReceiveAnswer> ReceiveAndStartAsync(int asked, CancellationToken stop)
    {
        var sentAt = PumpEvents.ReceiveSending();
        var messages = await _source.ReceiveBatchAsync(asked, stop);
        var answeredAt = TimeProvider.GetTimestamp();
        if (messages is null)
        {
            throw new InvalidOperationException($"{_source.GetType().Name}.ReceiveBatchAsync returned null; it must return an empty list when no message is visible.");
        }

        _events.ReceiveAnswered(sentAt, messages);

        var started = 0;
        foreach (var message in messages)
        {
            if (message is not null)
            {
                Start(message);
                started++;
            }
        }

        if (started != messages.Count || messages.Count > asked)
        {
            // Every message it did lock is processed (none is left locked), and the broken rule is reported.
            _events.TransportContractBroken(new InvalidOperationException(
                $"{_source.GetType().Name}.ReceiveBatchAsync returned {messages.Count} messages ({messages.Count - started} null) when asked for at most {asked}; it must return at most maxMessages messages, none of them null."));
        }

        return new ReceiveAnswer(started, answeredAt);
    }

    /// <summary>How many more messages may be received now (at least 1: the receive loop asks only when one may).</summary>
    private int FreeSlots()
    {
        lock (_gate)
        {
            var free = Math.Min(MaxInFlight - (_inFlight.Count - _settling), (2L * MaxInFlight) - _inFlight.Count);
            return (int)Math.Max(1, free);
        }
    }

    /// <summary>
    /// Whether a message may be received now: fewer than <see cref="MaxInFlight"/> in flight whose settlement has not been
    /// sent, and fewer than twice that in flight in all (the settlements under way never hold more than
    /// <see cref="MaxInFlight"/> more locks). Call under the lock.
    /// </summary>
    private bool HasCapacityLocked() =>
        _inFlight.Count - _settling < MaxInFlight && _inFlight.Count < 2L * MaxInFlight;

    /// <summary>
    /// Frees the message's slot for the next receive when its handler has returned and the settlement after it is on its
    /// way, if <see cref="MessagePumpOptions.ReceiveDuringSettlement"/> is on: the consumer's work is done, and the
    /// receive need not wait for the broker's answer. The message stays in flight (its lease kept, the stop path waiting
    /// for it) until that answer. A settlement a handler makes itself frees nothing while the handler runs.
    /// </summary>
    internal void FreeSlotAtSettlement(PumpDelivery delivery)
    {
        if (!_options.ReceiveDuringSettlement)
        {
            return;
        }

        lock (_gate)
        {
            if (!delivery.IsSettling && _inFlight.Contains(delivery))
            {
                delivery.IsSettling = true;
                _settling++;
                SignalCapacityLocked();
            }

            AssertInvariantsLocked();
        }
    }

    /// <summary>Returns a task to wait on when the pump is at capacity, or <see langword="null"/> when it may receive.</summary>
    [SuppressMessage("Usage", "MA0022:Return Task.FromResult instead of returning null", Justification = "null is the answer 'no need to wait': the receive loop awaits only a non-null task and then looks again; a completed task in its place would make the loop spin on it.")]
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "Returns the task of the pump's own capacity TaskCompletionSource (RunContinuationsAsynchronously), completed only by the pump; no JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    private Task? WaitForCapacityAsync()
    {
        lock (_gate)
        {
            if (HasCapacityLocked() || _state != State.Running)
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

    /// <summary>Registers a received message, puts its lease in the keeper's schedule and starts its path.</summary>
    private void Start(ILeasedMessage message)
    {
        var delivery = new PumpDelivery(this, message);
        lock (_gate)
        {
            _inFlight.Add(delivery);
            if (_inFlight.Count > _peakInFlight)
            {
                Volatile.Write(ref _peakInFlight, _inFlight.Count);
            }

            AssertInvariantsLocked();
        }

        Keeper.Schedule(delivery.Lease);
        _events.Received(message);
        delivery.Start(); // its path, from the processing lane to its end: PumpDelivery.ProcessAsync
    }

    /// <summary>
    /// Takes a message out of the pump's books: drops its lease from the keeper's schedule, signals it finished, frees
    /// its slot and wakes the receive loop. Called at the end of the message's path (<see cref="PumpDelivery"/>), or by
    /// the stop path for a handler still running; only the first call counts.
    /// </summary>
    internal void Finish(PumpDelivery delivery)
    {
        Keeper.Release(delivery.Lease); // the lease is dropped the moment the message is settled
        delivery.SignalFinished();
        bool removed;
        lock (_gate)
        {
            removed = _inFlight.Remove(delivery);
            if (removed && delivery.IsSettling)
            {
                _settling--;
            }

            SignalCapacityLocked();
            AssertInvariantsLocked();
        }

        if (removed)
        {
            _events.Finished();
        }
    }

    /// <summary>
    /// Ends the receive loop's pause after an empty receive now (<see cref="MessagePumpOptions.EmptyReceiveDelay"/>), so
    /// that messages a source holds for the pump (Service Bus deferred messages received on request, their locks
    /// running) are asked for at once. Nothing happens when the loop is not pausing. For a transport that holds messages
    /// for the pump on request (the Service Bus processor's deferred messages).
    /// </summary>
    public void WakeReceive()
    {
        if (Volatile.Read(ref _pauseWake) is not { } wake)
        {
            return;
        }

        try
        {
#pragma warning disable VSTHRD103 // the pause's continuation is posted to the receive lane, not run here
            wake.Cancel();
#pragma warning restore VSTHRD103
        }
        catch (ObjectDisposedException)
        {
            // the pause has ended
        }
    }

    /// <summary>
    /// Waits on the pump's clock and resumes in the current lane; returns early and quietly when
    /// <paramref name="cancellationToken"/> fires. The continuation is posted to the lane by the thread that completes
    /// the delay (no hop through the thread pool, which would let a virtual clock run ahead of it).
    /// </summary>
    private ConfiguredTaskAwaitable PauseAsync(TimeSpan delay, CancellationToken cancellationToken) =>
        Task.Delay(delay, TimeProvider, cancellationToken)
            .ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);

    /// <summary>What one receive returned: how many messages were started, and when the broker answered.</summary>
    [StructLayout(LayoutKind.Auto)]
    private readonly record struct ReceiveAnswer(int Received, long AnsweredAt);
}
