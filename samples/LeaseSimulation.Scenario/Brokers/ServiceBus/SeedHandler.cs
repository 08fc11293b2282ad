using LeaseSimulation.Consumers;
using LeaseSimulation.Messages;
using LeaseSimulation.Running;

namespace LeaseSimulation.Brokers.ServiceBus;

/// <summary>The seed's processing of one delivery, shared by the Service Bus consumers: L × (CPU operation, awaited IO).</summary>
public static class SeedHandler
{
    /// <summary>
    /// Processes one delivery: each loop holds the thread for the CPU time, then awaits the IO time. Stops early when
    /// <paramref name="cancellationToken"/> is cancelled (the lock is lost, the consumer stops) or the message is
    /// finished elsewhere (completed by another delivery, or the run's deadline).
    /// </summary>
    /// <param name="run">The run.</param>
    /// <param name="message">The scenario's record of the message.</param>
    /// <param name="timers">The time provider of the IO waits.</param>
    /// <param name="cancellationToken">Stops the processing.</param>
    /// <returns><see langword="true"/> when every loop ran: the delivery may be completed.</returns>
    public static async Task<bool> ProcessAsync(ScenarioRun run, SimulatedMessage message, TimeProvider timers, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(message);
        ArgumentNullException.ThrowIfNull(timers);
        var settings = run.Settings;
        var random = ScenarioRandom.ForMessage(settings.Seed, message.Id);
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, message.Finished);
        for (var loop = 0; loop < settings.Loops; loop++)
        {
            if (stop.IsCancellationRequested)
            {
                return false;
            }

            run.Clock.HoldThread(settings.CpuTime);
            try
            {
                await run.Clock.Delay(ScenarioRandom.Jitter(settings.IoTime, settings.IoJitter, random), timers, stop.Token);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return false;
            }
        }

        return !stop.IsCancellationRequested;
    }
}
