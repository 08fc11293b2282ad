using LeaseSimulation.Messages;
using LeaseSimulation.Settings;
using LeaseSimulation.Timing;
using LeaseSimulation.Tracking;

namespace LeaseSimulation.Running;

/// <summary>Everything one run shares: its settings, clock, queue and tracker.</summary>
public sealed class ScenarioRun
{
    /// <summary>Creates a run: validates <paramref name="settings"/>, starts the clock and fills the queue.</summary>
    /// <param name="settings">The run's settings.</param>
    /// <exception cref="ArgumentException">A setting is invalid; the exception names it.</exception>
    public ScenarioRun(SimulationSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        settings.Validate();
        Settings = settings;
        Clock = ScenarioClock.Create(settings);
        Queue = new MessageQueue(settings.Messages);
        Tracker = new ScenarioTracker(settings, Clock);
    }

    /// <summary>Gets the run's settings.</summary>
    public SimulationSettings Settings { get; }

    /// <summary>Gets the run's clock.</summary>
    public ScenarioClock Clock { get; }

    /// <summary>Gets the queue the consumer receives from.</summary>
    public MessageQueue Queue { get; }

    /// <summary>Gets what the run counts.</summary>
    public ScenarioTracker Tracker { get; }

    /// <summary>Gets the Service Bus ledger of a <c>--broker servicebus</c> run (set when its queue is created), or <see langword="null"/>.</summary>
    public LeaseSimulation.Brokers.ServiceBus.ServiceBusLedger? ServiceBusLedger { get; internal set; }

    /// <summary>Gets whether the run was stopped at its deadline.</summary>
    public bool ReachedDeadline { get; private set; }

    /// <summary>
    /// Stops the run at its deadline: closes the queue and ends every message in flight as lost, so the consumer's
    /// loops wind down at their next step.
    /// </summary>
    public void StopAtDeadline()
    {
        ReachedDeadline = true;
        Queue.Close();
        Tracker.AbandonInFlight();
    }
}
