using Azure.Messaging.ServiceBus;
using LeaseSimulation.Consumers;
using LeaseSimulation.Messages;
using LeaseSimulation.Running;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.AzureServiceBus;

namespace LeaseSimulation.Brokers.ServiceBus;

/// <summary>
/// The seed's naive consumer on Service Bus (<c>--broker servicebus --strategy fifo</c>): a receive loop that, for each
/// message, starts (without awaiting) a lock keeper that renews every renew interval and a processor that runs the seed's
/// loops and completes. It keeps receiving however loaded it is; all its continuations run where it was started (the
/// FIFO single-thread context, or the thread pool). Receives until the queue is drained or the run's deadline. Given a
/// <see cref="LeaseKeeper"/> (<c>receiver-keeper</c>), the keeper keeps each message instead of the seed's renewal loop,
/// and the loop first opens its receiver's management link, as the keeper's docs tell a receiver loop to.
/// </summary>
public sealed class ServiceBusSeedConsumer
{
    private readonly ScenarioRun _run;
    private readonly ServiceBusScenarioQueue _queue;
    private readonly LeaseKeeper? _keeper;

    /// <summary>Creates the consumer.</summary>
    /// <param name="run">The run.</param>
    /// <param name="queue">The run's Service Bus queue.</param>
    /// <param name="keeper">The keeper that keeps each message, or <see langword="null"/> for the seed's own renewal loop.</param>
    public ServiceBusSeedConsumer(ScenarioRun run, ServiceBusScenarioQueue queue, LeaseKeeper? keeper = null)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(queue);
        _run = run;
        _queue = queue;
        _keeper = keeper;
    }

    /// <summary>Receives until the queue is drained (or the deadline), then waits for every keeper and processor.</summary>
    /// <returns>A task that completes when every delivery has ended.</returns>
    public async Task RunAsync()
    {
        var settings = _run.Settings;
        var random = ScenarioRandom.ForReceive(settings.Seed);
        var timers = _run.Clock.TimeProvider;
        var work = new List<Task>();
        var receiver = _queue.CreateReceiver();
        try
        {
            if (_keeper is not null)
            {
                // As docs/keep-your-servicebusprocessor.md tells a receiver loop with a keeper: open the receiver's
                // $management link, which renewals use, before the first message is locked. The SDK opens it at the
                // first renewal, which then waits for two more answers from a starved pool while a short lock runs out.
                await receiver.PeekMessageAsync(long.MaxValue);
            }

            while (!_queue.IsDrained && !_run.ReachedDeadline)
            {
                await _run.Clock.Delay(ScenarioRandom.Jitter(settings.ReceiveTime, settings.IoJitter, random), timers);
                ServiceBusReceivedMessage? received;
                try
                {
                    received = await receiver.ReceiveMessageAsync(settings.RenewInterval * settings.TimeScale);
                }
                catch (ServiceBusException ex) when (ex.IsTransient)
                {
                    continue;
                }

                if (received is not null)
                {
                    work.Add(HandleAsync(receiver, received, timers));
                }
            }

            await Task.WhenAll(work);
        }
        finally
        {
            await receiver.DisposeAsync();
        }
    }

    private async Task HandleAsync(ServiceBusReceiver receiver, ServiceBusReceivedMessage received, TimeProvider timers)
    {
        var ledger = _queue.Ledger;
        var message = ledger.OnDelivered(received.MessageId, received.DeliveryCount);
        using var lockLost = new CancellationTokenSource();
        using var settling = new CancellationTokenSource();
        var lease = _keeper?.Keep(receiver, received);
        if (lease is { IsLost: true })
        {
            // The lock had run out before the message could be kept (the keeper counted and reported it): lost, as the
            // seed's loop finds at its first renewal.
            lease.Dispose();
            ledger.OnSettled(received.MessageId, received.DeliveryCount, DeliveryOutcome.LockLost);
            return;
        }

        var keeper = lease is null ? KeepLockAsync(receiver, received, message, timers, lockLost, settling.Token) : Task.CompletedTask;

        using var leaseLost = lease is null ? default : lease.LeaseLostToken.Register(() =>
        {
            // As the seed's loop does when a renewal is answered lock-lost.
            ledger.OnSettled(received.MessageId, received.DeliveryCount, DeliveryOutcome.LockLost);
            lockLost.Cancel();
        });
        ledger.OnHandlerStarted(received.MessageId);
        var processed = await SeedHandler.ProcessAsync(_run, message, timers, lockLost.Token);
        await settling.CancelAsync();
        await keeper;
        lease?.Dispose(); // as the seed stops its keeper: stop renewing, then settle
        try
        {
            if (processed)
            {
                await receiver.CompleteMessageAsync(received);
                ledger.OnSettled(received.MessageId, received.DeliveryCount, DeliveryOutcome.Completed);
            }
            else if (!lockLost.IsCancellationRequested)
            {
                await receiver.AbandonMessageAsync(received);
                ledger.OnSettled(received.MessageId, received.DeliveryCount, DeliveryOutcome.Abandoned);
            }
        }
        catch (ServiceBusException ex) when (ex.Reason == ServiceBusFailureReason.MessageLockLost)
        {
            ledger.OnSettled(received.MessageId, received.DeliveryCount, DeliveryOutcome.LockLost);
        }
        catch (ServiceBusException ex) when (ex.IsTransient)
        {
            // Not settled: the lock runs out and the broker redelivers; the ledger sees that at the redelivery.
        }
    }

    private async Task KeepLockAsync(ServiceBusReceiver receiver, ServiceBusReceivedMessage received, SimulatedMessage message, TimeProvider timers, CancellationTokenSource lockLost, CancellationToken settling)
    {
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(settling, message.Finished);
        while (true)
        {
            try
            {
                await _run.Clock.Delay(_run.Settings.RenewInterval, timers, stop.Token);
                await receiver.RenewMessageLockAsync(received, stop.Token);
                _queue.Ledger.OnRenewed(received.MessageId);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (ServiceBusException ex) when (ex.Reason == ServiceBusFailureReason.MessageLockLost)
            {
                _queue.Ledger.OnSettled(received.MessageId, received.DeliveryCount, DeliveryOutcome.LockLost);
                await lockLost.CancelAsync();
                return;
            }
            catch (ServiceBusException ex) when (ex.IsTransient)
            {
                // Try again at the next interval, as long as the lock lasts.
            }
        }
    }
}
