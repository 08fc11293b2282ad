using LeaseSimulation.Messages;
using LeaseSimulation.Running;

namespace LeaseSimulation.Consumers;

/// <summary>
/// The seed's consumer, as written there: a receive loop that, for each message, starts (without awaiting) a lease
/// keeper and a processor. The only additions are the hooks of an <see cref="IContinuationOrdering"/>.
/// </summary>
public sealed class SeedConsumer
{
    private readonly ScenarioRun _run;
    private readonly IContinuationOrdering _ordering;

    /// <summary>Creates the consumer of <paramref name="run"/>.</summary>
    /// <param name="run">The run.</param>
    /// <param name="ordering">The strategy's hooks.</param>
    public SeedConsumer(ScenarioRun run, IContinuationOrdering ordering)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(ordering);
        _run = run;
        _ordering = ordering;
    }

    /// <summary>Receives every message, then waits until every lease keeper and processor has finished.</summary>
    /// <returns>A task that completes when every message is done or lost.</returns>
    public async Task RunAsync()
    {
        await _ordering.EnterAsync(ConsumerRole.Receive);
        var settings = _run.Settings;
        var random = ScenarioRandom.ForReceive(settings.Seed);
        var work = new List<Task>();
        while (_run.Queue.HasMessages)
        {
            await _run.Clock.Delay(Jitter(settings.ReceiveTime, random), _ordering.Timers);
            await _ordering.ResumeAsync(ConsumerRole.Receive);
            if (!_run.Queue.TryTake(out var message))
            {
                break;
            }

            _run.Tracker.OnReceived(message);
            work.Add(KeepLeaseAsync(message));
            work.Add(ProcessAsync(message));
        }

        await Task.WhenAll(work);
    }

    private async Task KeepLeaseAsync(SimulatedMessage message)
    {
        await _ordering.EnterAsync(ConsumerRole.Lease);
        while (true)
        {
            try
            {
                await _run.Clock.Delay(_run.Settings.RenewInterval, _ordering.Timers, message.Finished);
            }
            catch (OperationCanceledException) when (message.Finished.IsCancellationRequested)
            {
                return;
            }

            await _ordering.ResumeAsync(ConsumerRole.Lease);
            if (!_run.Tracker.Renew(message))
            {
                return;
            }
        }
    }

    private async Task ProcessAsync(SimulatedMessage message)
    {
        await _ordering.EnterAsync(ConsumerRole.Processing);
        var settings = _run.Settings;
        var random = ScenarioRandom.ForMessage(settings.Seed, message.Id);
        for (var loop = 0; loop < settings.Loops; loop++)
        {
            if (message.IsFinished)
            {
                return;
            }

            _run.Clock.HoldThread(settings.CpuTime);
            await _run.Clock.Delay(Jitter(settings.IoTime, random), _ordering.Timers);
            await _ordering.ResumeAsync(ConsumerRole.Processing);
        }

        _run.Tracker.Complete(message);
    }

    private TimeSpan Jitter(TimeSpan nominal, Random random) => ScenarioRandom.Jitter(nominal, _run.Settings.IoJitter, random);
}
