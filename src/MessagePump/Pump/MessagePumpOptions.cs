using System.Diagnostics.CodeAnalysis;
using System.Diagnostics.Metrics;

namespace PriorityAsync.MessagePump;

/// <summary>Options of a <see cref="PriorityMessagePump"/>. Validated when the pump is created; an invalid value throws naming the option.</summary>
public sealed class MessagePumpOptions
{
    /// <summary>
    /// The default number of messages in flight per scheduler worker when <see cref="MaxInFlight"/> is not set: a
    /// safety cap, high enough not to limit IO-heavy handlers (admission by spare capacity decides how many are in flight).
    /// </summary>
    internal const int DefaultInFlightPerWorker = 256;

    /// <summary>The default of <see cref="MaxBatchSize"/>.</summary>
    internal const int DefaultMaxBatchSize = 100;

    /// <summary>The largest <see cref="MaxBatchSize"/> accepted.</summary>
    internal const int MaxBatchSizeLimit = 1000;

    /// <summary>Gets or sets the pump's name: it tags metrics and log scopes. Defaults to <c>message-pump</c>.</summary>
    public string Name { get; set; } = "message-pump";

    /// <summary>
    /// Gets or sets how many messages may be in flight at once: received, and their settlement not yet sent (a message
    /// whose handler has not started counts). A safety cap: the pump receives only when the scheduler has spare capacity,
    /// so the number in flight follows what the handlers cost. <see langword="null"/> (the default) uses the processing
    /// lane's concurrency (1 for a <see cref="PriorityAsyncContext"/>, the ordinary workers of a
    /// <see cref="PriorityTaskScheduler"/>) times <see cref="DefaultInFlightPerWorker"/>. At least 1.
    /// </summary>
    /// <remarks>
    /// With <see cref="ReceiveDuringSettlement"/> on (the default), a message whose complete, abandon or dead-letter is on
    /// its way to the broker no longer takes a slot, and up to this many such settlements are awaited at once: at most
    /// twice this many messages are locked at once. Turn it off for at most this many locked at once.
    /// </remarks>
    public int? MaxInFlight { get; set; }

    /// <summary>
    /// Gets or sets whether the next receive may go out while the broker answers a settlement. <see langword="true"/>
    /// (the default): a message's slot of <see cref="MaxInFlight"/> frees when its handler has returned and its settlement
    /// is sent (a settlement the handler makes itself frees nothing before the handler returns), so with a broker
    /// round trip of R a consumer at one message in flight spends about R per message waiting, not 2R (receive, then
    /// complete); the message stays in flight, its lock renewed and <see cref="PriorityMessagePump.StopAsync"/> waiting
    /// for it, until the answer, and at most <see cref="MaxInFlight"/> settlements are awaited at once.
    /// <see langword="false"/>: the slot frees with the broker's answer, so at most <see cref="MaxInFlight"/> messages
    /// are ever locked at once (the receive of the next message waits for the last one's settlement, as
    /// <c>ServiceBusProcessor</c> does).
    /// </summary>
    public bool ReceiveDuringSettlement { get; set; } = true;

    /// <summary>
    /// Gets or sets the most messages asked for in one receive call and completed in one complete call. The pump starts
    /// at 1 and adapts each receive's ask to the broker's round trip and the consumer's spare capacity; completions that
    /// finish while a complete call is under way go together in the next call. 1 turns batching off (one call per
    /// message). Defaults to <see cref="DefaultMaxBatchSize"/>; between 1 and <see cref="MaxBatchSizeLimit"/>.
    /// </summary>
    public int MaxBatchSize { get; set; } = DefaultMaxBatchSize;

    /// <summary>
    /// Gets or sets the options of the pump's lease keeper, which renews the lock of every message in flight:
    /// <see cref="LeaseKeeperOptions.LockRenewalBuffer"/> (when to renew), <see cref="LeaseKeeperOptions.MaxBatchSize"/>
    /// (the most leases in one renew call) and <see cref="LeaseKeeperOptions.TransientRetryDelay"/> (the pause before
    /// retrying a renew call). The keeper takes the pump's <see cref="Name"/>, <see cref="LeaseLane"/>,
    /// <see cref="TimeProvider"/> and <see cref="MeterFactory"/>: those four are left at their defaults here (a value
    /// set here is refused rather than ignored). Not null; a pump copies it when it is created. The same type configures a
    /// <see cref="MessagePump.LeaseKeeper"/> of your own, so one set of renewal options means the same in both.
    /// </summary>
    public LeaseKeeperOptions LeaseKeeper { get; set; } = new();

    /// <summary>
    /// Gets or sets the pause before retrying a settle call that failed transiently; the pause is cut to half the
    /// remaining lock, and retries stop when the lock runs out. Renew calls retry by
    /// <see cref="LeaseKeeperOptions.TransientRetryDelay"/> of <see cref="LeaseKeeper"/>. Defaults to 1 s; positive.
    /// </summary>
    public TimeSpan TransientRetryDelay { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Gets or sets the pause after a receive that found the queue empty or failed. Defaults to 1 s; positive.</summary>
    public TimeSpan EmptyReceiveDelay { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Gets or sets how long <see cref="PriorityMessagePump.StopAsync"/> lets messages in flight finish before it cancels their
    /// handlers and abandons them. Defaults to 25 s (<see cref="DefaultShutdownTimeout"/>); zero or positive, or
    /// <see cref="Timeout.InfiniteTimeSpan"/>.
    /// Zero: the stop does not wait for handlers: it cancels their tokens at once and abandons their messages (a
    /// settlement already under way still gets its answer, bounded by the lock), so nothing is left locked.
    /// <see cref="Timeout.InfiniteTimeSpan"/>: the stop waits for every handler. Any other negative value is refused.
    /// </summary>
    /// <remarks>
    /// The default is 5 s below the generic host's default shutdown timeout (<c>HostOptions.ShutdownTimeout</c>, 30 s), so
    /// that a hosted pump stopped with the defaults has abandoned what is left and returned before the host gives up on
    /// it. Hosted, keep it a few seconds below the host's (and the host's below your orchestrator's grace period).
    /// </remarks>
    public TimeSpan ShutdownTimeout { get; set; } = DefaultShutdownTimeout;

    /// <summary>
    /// Gets the default <see cref="ShutdownTimeout"/>, 25 s: 5 s below the generic host's default shutdown timeout
    /// (30 s), left for the abandons and settlements of a stop to reach the broker.
    /// </summary>
    public static TimeSpan DefaultShutdownTimeout { get; } = TimeSpan.FromSeconds(25);

    /// <summary>Gets or sets the lane of lease renewal and settlement. Defaults to <see cref="LanePriority.Lease"/>.</summary>
    public LanePriority LeaseLane { get; set; } = LanePriority.Lease;

    /// <summary>Gets or sets the lane the handler runs in. Defaults to <see cref="LanePriority.Processing"/>; less urgent than <see cref="LeaseLane"/>.</summary>
    public LanePriority ProcessingLane { get; set; } = LanePriority.Processing;

    /// <summary>Gets or sets the lane of receiving. Defaults to <see cref="LanePriority.Receive"/>; less urgent than <see cref="ProcessingLane"/>.</summary>
    public LanePriority ReceiveLane { get; set; } = LanePriority.Receive;

    /// <summary>
    /// Gets or sets the clock of renewal timing, pauses and durations. <see langword="null"/> (the default) uses the
    /// scheduler's <see cref="PriorityScheduler.TimeProvider"/>, whose timers fire in the lane that created them.
    /// </summary>
    public TimeProvider? TimeProvider { get; set; }

    /// <summary>
    /// Gets or sets the factory that creates the pump's <see cref="MessagePumpDiagnostics.MeterName"/> meter, for
    /// example the dependency-injection container's, so that its listeners and lifetime apply. <see langword="null"/>
    /// (the default) uses one static meter shared by every pump.
    /// </summary>
    public IMeterFactory? MeterFactory { get; set; }

    /// <summary>
    /// Throws when an option breaks its rule, as the pump's constructor does; the exception's
    /// <see cref="ArgumentException.ParamName"/> names the option. Each option's rule is in its documentation; the rules
    /// that depend on the source (<see cref="LeaseKeeperOptions.LockRenewalBuffer"/> of <see cref="LeaseKeeper"/> below its lock duration) or on the scheduler (the
    /// lanes exist in it) are checked only when that is given. For checking configuration at startup.
    /// </summary>
    /// <param name="lockDuration">The source's lock duration (<see cref="IMessageSource.LockDuration"/>), when known.</param>
    /// <param name="scheduler">The scheduler the lanes must exist in, when known.</param>
    /// <exception cref="ArgumentException">An option breaks its rule (an <see cref="ArgumentOutOfRangeException"/> for a value out of its bounds).</exception>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole; its parameters are context, not the checked values. ParamName names the offending option property, as documented, so a caller sees which option is wrong.")]
    [SuppressMessage("Usage", "CA2208:Instantiate argument exceptions correctly", Justification = "Validate checks the options object as a whole; its parameters are context, not the checked values. ParamName names the offending option property, as documented, so a caller sees which option is wrong.")]
    public void Validate(TimeSpan? lockDuration = null, PriorityScheduler? scheduler = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(Name, nameof(Name));
        if (MaxInFlight < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxInFlight), MaxInFlight, "MessagePumpOptions.MaxInFlight must be at least 1, or null for the default.");
        }

        OptionRules.ThrowIfOutOfRange(MaxBatchSize, 1, MaxBatchSizeLimit, nameof(MessagePumpOptions), nameof(MaxBatchSize));

        if (LeaseKeeper is null)
        {
            throw new ArgumentNullException(nameof(LeaseKeeper), "MessagePumpOptions.LeaseKeeper must not be null: leave it at its default for the default renewal options.");
        }

        LeaseKeeper.Validate(lockDuration, scheduler, nameof(MessagePumpOptions), paramPrefix: nameof(LeaseKeeper) + ".", ownsIdentity: false);

        OptionRules.ThrowIfNotPositiveDelay(TransientRetryDelay, nameof(MessagePumpOptions), nameof(TransientRetryDelay));
        OptionRules.ThrowIfNotPositiveDelay(EmptyReceiveDelay, nameof(MessagePumpOptions), nameof(EmptyReceiveDelay));
        OptionRules.ThrowIfNotTimeout(ShutdownTimeout, nameof(MessagePumpOptions), nameof(ShutdownTimeout));

        if (scheduler is not null)
        {
            ThrowIfNotALane(LeaseLane, nameof(LeaseLane), scheduler);
            ThrowIfNotALane(ProcessingLane, nameof(ProcessingLane), scheduler);
            ThrowIfNotALane(ReceiveLane, nameof(ReceiveLane), scheduler);
        }

        if (ProcessingLane.Rank <= LeaseLane.Rank)
        {
            throw new ArgumentOutOfRangeException(nameof(ProcessingLane), ProcessingLane, "MessagePumpOptions.ProcessingLane must be less urgent than LeaseLane.");
        }

        if (ReceiveLane.Rank <= ProcessingLane.Rank)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveLane), ReceiveLane, "MessagePumpOptions.ReceiveLane must be less urgent than ProcessingLane.");
        }

    }

    /// <summary>Returns a copy, so that later changes to this instance do not reach a running pump.</summary>
    internal MessagePumpOptions Clone()
    {
        var clone = (MessagePumpOptions)MemberwiseClone();
        clone.LeaseKeeper = LeaseKeeper?.Clone()!; // Validate refuses a null one, naming it
        return clone;
    }

    private static void ThrowIfNotALane(LanePriority lane, string name, PriorityScheduler scheduler)
    {
        if (lane.Rank >= scheduler.Lanes.Count)
        {
            throw new ArgumentOutOfRangeException(name, lane, $"MessagePumpOptions.{name} is not a lane of {scheduler} ({scheduler.Lanes.Count} lanes).");
        }
    }

}
