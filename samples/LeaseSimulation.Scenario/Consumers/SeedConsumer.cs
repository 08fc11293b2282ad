using LeaseSimulation.Messages;
using LeaseSimulation.Running;
using PriorityAsync.MessagePump;

namespace LeaseSimulation.Consumers;

/// <summary>
/// The seed's consumer, as written there: a receive loop that, for each message, starts (without awaiting) a lease
/// keeper and a processor. The only additions are the hooks of an <see cref="IContinuationOrdering"/>, and, with a
/// broker (<c>--broker postgres</c>), the broker's receive, renew and complete calls, whose verdicts the tracker records.
/// </summary>
public sealed class SeedConsumer
{
    private readonly ScenarioRun _run;
    private readonly IContinuationOrdering _ordering;
    private readonly IMessageSource? _broker;

    /// <summary>Creates the consumer of <paramref name="run"/>.</summary>
    /// <param name="run">The run.</param>
    /// <param name="ordering">The strategy's hooks.</param>
    /// <param name="broker">
    /// A broker queue holding the run's messages, which then judges the leases; <see langword="null"/> for the
    /// scenario's own lease judgement (the embedded default).
    /// </param>
    public SeedConsumer(ScenarioRun run, IContinuationOrdering ordering, IMessageSource? broker = null)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(ordering);
        _run = run;
        _ordering = ordering;
        _broker = broker;
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

            ILeasedMessage? leased = null;
            if (_broker is not null)
            {
                // The broker's lock runs from the moment it ran the receive: take its reply in the lease role, not
                // behind every ready processing step (in the receive lane it could wait longer than the lock lasts).
                await _ordering.EnterAsync(ConsumerRole.Lease);
                leased = await _broker.ReceiveAsync()
                    ?? throw new InvalidOperationException($"The broker queue ran out before message {message.Id}; it must hold every message of the run.");
            }

            _run.Tracker.OnReceived(message);
            if (leased is null)
            {
                work.Add(KeepLeaseAsync(message, null, CancellationToken.None));
                work.Add(ProcessAsync(message, null, null));
            }
            else
            {
                // The processor cancels the keeper's renewal when it completes: a renewal that races the completion
                // finds the row gone, which is no lost lease.
                var settling = new CancellationTokenSource();
                var pair = Task.WhenAll(KeepLeaseAsync(message, leased, settling.Token), ProcessAsync(message, leased, settling));
                work.Add(pair.ContinueWith(static (_, cts) => ((CancellationTokenSource)cts!).Dispose(), settling, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default));
                await _ordering.EnterAsync(ConsumerRole.Receive);
            }
        }

        await Task.WhenAll(work);
    }

    private async Task KeepLeaseAsync(SimulatedMessage message, ILeasedMessage? leased, CancellationToken settling)
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
            if (leased is null ? !_run.Tracker.Renew(message) : !await RenewOnBrokerAsync(message, leased, settling))
            {
                return;
            }
        }
    }

    private async Task ProcessAsync(SimulatedMessage message, ILeasedMessage? leased, CancellationTokenSource? settling)
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

        if (leased is null)
        {
            _run.Tracker.Complete(message);
            return;
        }

        try
        {
            settling!.Cancel();
            await leased.CompleteAsync();
            _run.Tracker.RecordBrokerOutcome(message, MessageStatus.Done);
        }
        catch (Exception ex) when (ex is LeaseLostException or TransientTransportException)
        {
            _run.Tracker.RecordBrokerOutcome(message, MessageStatus.Lost);
        }
    }

    /// <summary>Renews on the broker, which judges the lease; returns whether the keeper should go on.</summary>
    private async Task<bool> RenewOnBrokerAsync(SimulatedMessage message, ILeasedMessage leased, CancellationToken settling)
    {
        if (message.IsFinished || settling.IsCancellationRequested)
        {
            return false;
        }

        try
        {
            await leased.RenewLockAsync(settling);
            _run.Tracker.RecordBrokerRenewal(message, renewed: true);
            return true;
        }
        catch (OperationCanceledException) when (settling.IsCancellationRequested)
        {
            return false; // the processor is completing the message
        }
        catch (LeaseLostException)
        {
            _run.Tracker.RecordBrokerRenewal(message, renewed: false);
            return false;
        }
        catch (TransientTransportException)
        {
            return true; // try again at the next interval, as long as the lock lasts
        }
    }

    private TimeSpan Jitter(TimeSpan nominal, Random random) => ScenarioRandom.Jitter(nominal, _run.Settings.IoJitter, random);
}
