using System.Diagnostics.CodeAnalysis;
using System.Diagnostics.Metrics;

namespace PriorityAsync.MessagePump;

/// <summary>
/// Options of a <see cref="LeaseKeeper"/>, and of a <see cref="PriorityMessagePump"/>'s own keeper
/// (<see cref="MessagePumpOptions.LeaseKeeper"/>). Validated when the keeper (or the pump) is created, or by
/// <see cref="Validate(TimeSpan?, PriorityScheduler?)"/>; an invalid value throws naming the option.
/// </summary>
public sealed class LeaseKeeperOptions
{
    /// <summary>The default of <see cref="Name"/>.</summary>
    internal const string DefaultName = "lease-keeper";

    /// <summary>
    /// Gets or sets the keeper's name: it tags metrics and log scopes. Defaults to <c>lease-keeper</c>; not empty or white
    /// space. A pump's keeper has the pump's <see cref="MessagePumpOptions.Name"/>: leave this at its default there.
    /// </summary>
    public string Name { get; set; } = DefaultName;

    /// <summary>
    /// Gets or sets how much lock time may remain when the keeper renews. <see langword="null"/> (the default) renews
    /// when min(half of the remaining lock, 10 s) remains, like Azure Service Bus: at most two renew calls per lock
    /// duration (the renewal budget). Set, it replaces that rule as set: a buffer above half the lock renews more often
    /// than twice per lock duration (each call is a billed broker operation). Either way the keeper renews earlier when
    /// three times the worst of the last 32 request legs is more (how long a renewal took to reach the broker, where the
    /// source knows its lock duration; otherwise the whole round trip): a renewal sent later could not reach the broker
    /// in time. Positive, and below the lock duration of every source kept with it (checked by <see cref="LeaseKeeper.Keep"/>,
    /// and by a pump for its source when it is created).
    /// </summary>
    public TimeSpan? LockRenewalBuffer { get; set; }

    /// <summary>
    /// Gets or sets the most leases renewed in one <see cref="IMessageSource.RenewBatchAsync"/> call. Defaults to
    /// <see cref="MessagePumpOptions.DefaultMaxBatchSize"/>; between 1 and <see cref="MessagePumpOptions.MaxBatchSizeLimit"/>.
    /// </summary>
    public int MaxBatchSize { get; set; } = MessagePumpOptions.DefaultMaxBatchSize;

    /// <summary>
    /// Gets or sets the pause before retrying a renew call that failed transiently, doubled for each retry of the same
    /// call and cut to half the remaining lock; retries stop when the lock runs out. Defaults to 1 s; positive, at most
    /// <see cref="PrioritySchedulerOptions.MaxTimerDelay"/>.
    /// </summary>
    public TimeSpan TransientRetryDelay { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Gets or sets the lane the keeper renews in. Defaults to <see cref="LanePriority.Lease"/>; a lane of the keeper's
    /// scheduler. A pump's keeper renews in the pump's <see cref="MessagePumpOptions.LeaseLane"/>: leave this at its
    /// default there.
    /// </summary>
    public LanePriority LeaseLane { get; set; } = LanePriority.Lease;

    /// <summary>
    /// Gets or sets the keeper's clock. <see langword="null"/> (the default) uses the scheduler's
    /// <see cref="PriorityScheduler.TimeProvider"/>. A pump's keeper runs on the pump's
    /// <see cref="MessagePumpOptions.TimeProvider"/>: leave this unset there.
    /// </summary>
    public TimeProvider? TimeProvider { get; set; }

    /// <summary>
    /// Gets or sets the factory that creates the keeper's <see cref="MessagePumpDiagnostics.MeterName"/> meter.
    /// <see langword="null"/> (the default) uses the shared static meter. A pump's keeper reports through the pump's
    /// meter (<see cref="MessagePumpOptions.MeterFactory"/>): leave this unset there.
    /// </summary>
    public IMeterFactory? MeterFactory { get; set; }

    /// <summary>
    /// Throws when an option breaks its rule, as the keeper's constructor does; the exception's
    /// <see cref="ArgumentException.ParamName"/> names the option. The rules that depend on a source
    /// (<see cref="LockRenewalBuffer"/> below its lock duration) or on the scheduler (<see cref="LeaseLane"/> exists in
    /// it) are checked only when that is given. For checking configuration at startup.
    /// </summary>
    /// <param name="lockDuration">The lock duration of a source to be kept (<see cref="IMessageSource.LockDuration"/>), when known.</param>
    /// <param name="scheduler">The scheduler the keeper is to run on, when known.</param>
    /// <exception cref="ArgumentException">An option breaks its rule (an <see cref="ArgumentOutOfRangeException"/> for a value out of its bounds).</exception>
    public void Validate(TimeSpan? lockDuration = null, PriorityScheduler? scheduler = null) =>
        Validate(lockDuration, scheduler, nameof(LeaseKeeperOptions), paramPrefix: string.Empty, ownsIdentity: true);

    /// <summary>Returns a copy, so that later changes to this instance do not reach a running keeper.</summary>
    internal LeaseKeeperOptions Clone() => (LeaseKeeperOptions)MemberwiseClone();

    /// <summary>
    /// The options of a pump's keeper: the renewal options the pump was given in <see cref="MessagePumpOptions.LeaseKeeper"/>,
    /// with the pump's name, lease lane, clock and meter.
    /// </summary>
    internal static LeaseKeeperOptions ForPump(MessagePumpOptions pump) => new()
    {
        Name = pump.Name,
        LockRenewalBuffer = pump.LeaseKeeper.LockRenewalBuffer,
        MaxBatchSize = pump.LeaseKeeper.MaxBatchSize,
        TransientRetryDelay = pump.LeaseKeeper.TransientRetryDelay,
        LeaseLane = pump.LeaseLane,
        TimeProvider = pump.TimeProvider,
        MeterFactory = pump.MeterFactory,
    };

    /// <summary>
    /// Checks the options as a keeper's own (<paramref name="ownsIdentity"/>: <see cref="Name"/>, <see cref="LeaseLane"/>,
    /// <see cref="TimeProvider"/> and <see cref="MeterFactory"/> are its own) or as a pump's keeper, whose identity the
    /// pump gives it (those four are refused unless left at their defaults, so that none is set and silently ignored).
    /// Messages name the option as <paramref name="owner"/>.<paramref name="paramPrefix"/>Option, and
    /// <see cref="ArgumentException.ParamName"/> as <paramref name="paramPrefix"/>Option.
    /// </summary>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole; ParamName names the offending option property.")]
    [SuppressMessage("Usage", "CA2208:Instantiate argument exceptions correctly", Justification = "Validate checks the options object as a whole; ParamName names the offending option property.")]
    internal void Validate(TimeSpan? lockDuration, PriorityScheduler? scheduler, string owner, string paramPrefix, bool ownsIdentity)
    {
        if (ownsIdentity)
        {
            ArgumentException.ThrowIfNullOrWhiteSpace(Name, nameof(Name));
        }
        else
        {
            ThrowIfSet(!string.Equals(Name, DefaultName, StringComparison.Ordinal), nameof(Name), Name, "Name");
            ThrowIfSet(LeaseLane != LanePriority.Lease, nameof(LeaseLane), LeaseLane, "LeaseLane");
            ThrowIfSet(TimeProvider is not null, nameof(TimeProvider), TimeProvider, "TimeProvider");
            ThrowIfSet(MeterFactory is not null, nameof(MeterFactory), MeterFactory, "MeterFactory");
        }

        OptionRules.ThrowIfOutOfRange(MaxBatchSize, 1, MessagePumpOptions.MaxBatchSizeLimit, owner, paramPrefix + nameof(MaxBatchSize));
        if (LockRenewalBuffer is { } buffer && (buffer <= TimeSpan.Zero || buffer >= lockDuration))
        {
            throw new ArgumentOutOfRangeException(paramPrefix + nameof(LockRenewalBuffer), buffer, lockDuration is null
                ? $"{owner}.{paramPrefix}{nameof(LockRenewalBuffer)} must be positive, or null for the default rule."
                : $"{owner}.{paramPrefix}{nameof(LockRenewalBuffer)} must be positive and below the source's lock duration ({lockDuration}), or null for the default rule.");
        }

        OptionRules.ThrowIfNotPositiveDelay(TransientRetryDelay, owner, paramPrefix + nameof(TransientRetryDelay));
        if (ownsIdentity && scheduler is not null && LeaseLane.Rank >= scheduler.Lanes.Count)
        {
            throw new ArgumentOutOfRangeException(nameof(LeaseLane), LeaseLane, $"{owner}.LeaseLane is not a lane of {scheduler} ({scheduler.Lanes.Count} lanes).");
        }

        void ThrowIfSet(bool set, string option, object? value, string pumpOption)
        {
            if (set)
            {
                throw new ArgumentOutOfRangeException(paramPrefix + option, value, $"{owner}.{paramPrefix}{option} must be left at its default: a pump's keeper takes the pump's own; set MessagePumpOptions.{pumpOption}.");
            }
        }
    }
}
