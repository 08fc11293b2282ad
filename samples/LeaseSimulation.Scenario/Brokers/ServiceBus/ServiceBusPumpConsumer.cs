using LeaseSimulation.Messages;
using LeaseSimulation.Running;
using PriorityAsync;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.AzureServiceBus;

namespace LeaseSimulation.Brokers.ServiceBus;

/// <summary>
/// The pump on Service Bus (<c>--broker servicebus --strategy pump</c>): PriorityAsync.MessagePump.AzureServiceBus's
/// source on the run's queue, the seed's processing as handler, locks renewed in the lease lane one renew interval
/// after each renewal. Runs until the queue is drained or the run reaches its deadline, then stops the pump (which
/// gives back whatever it still holds).
/// </summary>
public static class ServiceBusPumpConsumer
{
    /// <summary>Runs the pump on <paramref name="scheduler"/> until the queue is drained or the deadline.</summary>
    /// <param name="run">The run.</param>
    /// <param name="scheduler">The scheduler the pump runs on.</param>
    /// <param name="queue">The run's Service Bus queue.</param>
    /// <returns>A task that completes when the pump has stopped.</returns>
    public static async Task RunAsync(ScenarioRun run, PriorityScheduler scheduler, ServiceBusScenarioQueue queue)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(scheduler);
        ArgumentNullException.ThrowIfNull(queue);
        var settings = run.Settings;
        await using var transport = new ServiceBusTransport(queue.Client, new ServiceBusTransportOptions { ReadEntityProperties = false });
        await using var source = await transport.OpenAsync(ServiceBusEntity.Queue(queue.QueueName), new ServiceBusSourceOptions
        {
            LockDuration = queue.LockDuration,
            PrefetchCount = 0,
            MaxWaitTime = settings.RenewInterval * settings.TimeScale,
        });
        var pump = new PriorityMessagePump(
            new LedgerMessageSource(source, queue.Ledger),
            async (context, cancellationToken) =>
            {
                var message = (ReportingLeasedMessage)context.Message;
                queue.Ledger.OnHandlerStarted(message.MessageId);
                if (!await SeedHandler.ProcessAsync(run, message.Simulated, context.TimeProvider, cancellationToken))
                {
                    // Stopped early: the lock was lost (the pump already knows) or the run reached its deadline, when the
                    // failure makes the pump abandon the message.
                    cancellationToken.ThrowIfCancellationRequested();
                    throw new InvalidOperationException($"Message {message.MessageId} was not processed: the run reached its deadline.");
                }
            },
            scheduler,
            new MessagePumpOptions
            {
                Name = "lease-simulation-servicebus",
                LeaseKeeper = new() { LockRenewalBuffer = (settings.LeaseDuration - settings.RenewInterval) * settings.TimeScale },
                EmptyReceiveDelay = settings.RenewInterval * settings.TimeScale,
                ShutdownTimeout = TimeSpan.Zero,
            });
        await using (pump)
        {
            await pump.StartAsync();
            while (!queue.IsDrained && !run.ReachedDeadline)
            {
                await run.Clock.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
            }

            await pump.StopAsync();
        }
    }
}
