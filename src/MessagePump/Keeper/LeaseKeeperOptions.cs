using System.Diagnostics.CodeAnalysis;
using System.Diagnostics.Metrics;

namespace PriorityAsync.MessagePump;

/// <summary>
/// Options of a <see cref="LeaseKeeper"/>. Validated when the keeper is created; an invalid value throws naming the
/// option. A <see cref="PriorityMessagePump"/> builds its keeper from its own <see cref="MessagePumpOptions"/> of the same names.
/// </summary>
public sealed class LeaseKeeperOptions
{
    /// <summary>Gets or sets the keeper's name: it tags metrics and log scopes. Defaults to <c>lease-keeper</c>.</summary>
    public string Name { get; set; } = "lease-keeper";

    /// <summary>
    /// Gets or sets how much lock time may remain when the keeper renews (as <see cref="MessagePumpOptions.LockRenewalBuffer"/>).
    /// <see langword="null"/> (the default) renews when min(half of the remaining lock, 10 s) remains: at most two renew
    /// calls per lock duration (the renewal budget). Set, it replaces that rule as set: a buffer above half the lock
    /// renews more often than twice per lock duration (each call is a billed broker operation). Either way the
    /// keeper renews earlier when three times the worst of the last 32 request legs is more. Positive, and below the
    /// lock duration of every source kept with it.
    /// </summary>
    public TimeSpan? LockRenewalBuffer { get; set; }

    /// <summary>
    /// Gets or sets the most leases renewed in one <see cref="IMessageSource.RenewBatchAsync"/> call (as
    /// <see cref="MessagePumpOptions.MaxBatchSize"/>). Defaults to <see cref="MessagePumpOptions.DefaultMaxBatchSize"/>;
    /// between 1 and <see cref="MessagePumpOptions.MaxBatchSizeLimit"/>.
    /// </summary>
    public int MaxBatchSize { get; set; } = MessagePumpOptions.DefaultMaxBatchSize;

    /// <summary>
    /// Gets or sets the pause before retrying a renew call that failed transiently (as
    /// <see cref="MessagePumpOptions.TransientRetryDelay"/>); cut to half the remaining lock. Defaults to 1 s; positive.
    /// </summary>
    public TimeSpan TransientRetryDelay { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Gets or sets the lane the keeper renews in (as <see cref="MessagePumpOptions.LeaseLane"/>). Defaults to <see cref="LanePriority.Lease"/>.</summary>
    public LanePriority LeaseLane { get; set; } = LanePriority.Lease;

    /// <summary>
    /// Gets or sets the keeper's clock (as <see cref="MessagePumpOptions.TimeProvider"/>). <see langword="null"/> (the
    /// default) uses the scheduler's <see cref="PriorityScheduler.TimeProvider"/>.
    /// </summary>
    public TimeProvider? TimeProvider { get; set; }

    /// <summary>
    /// Gets or sets the factory that creates the keeper's <see cref="MessagePumpDiagnostics.MeterName"/> meter (as
    /// <see cref="MessagePumpOptions.MeterFactory"/>). <see langword="null"/> (the default) uses the shared static meter.
    /// </summary>
    public IMeterFactory? MeterFactory { get; set; }

    /// <summary>The keeper options of a pump: its own options of the same names (one place to set each).</summary>
    internal static LeaseKeeperOptions For(MessagePumpOptions pump) => new()
    {
        Name = pump.Name,
        LockRenewalBuffer = pump.LockRenewalBuffer,
        MaxBatchSize = pump.MaxBatchSize,
        TransientRetryDelay = pump.TransientRetryDelay,
        LeaseLane = pump.LeaseLane,
        TimeProvider = pump.TimeProvider,
        MeterFactory = pump.MeterFactory,
    };

    /// <summary>Returns a copy, so that later changes to this instance do not reach a running keeper.</summary>
    internal LeaseKeeperOptions Clone() => (LeaseKeeperOptions)MemberwiseClone();

    /// <summary>Throws when an option breaks its rule; the exception names the option.</summary>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole; ParamName names the offending option property.")]
    [SuppressMessage("Usage", "CA2208:Instantiate argument exceptions correctly", Justification = "Validate checks the options object as a whole; ParamName names the offending option property.")]
    internal void Validate(PriorityScheduler scheduler)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(Name, nameof(Name));
        OptionRules.ThrowIfOutOfRange(MaxBatchSize, 1, MessagePumpOptions.MaxBatchSizeLimit, nameof(LeaseKeeperOptions), nameof(MaxBatchSize));
        if (LockRenewalBuffer is { } buffer && buffer <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(LockRenewalBuffer), buffer, "LeaseKeeperOptions.LockRenewalBuffer must be positive, or null for the default rule.");
        }

        OptionRules.ThrowIfNotPositiveDelay(TransientRetryDelay, nameof(LeaseKeeperOptions), nameof(TransientRetryDelay));
        if (LeaseLane.Rank >= scheduler.Lanes.Count)
        {
            throw new ArgumentOutOfRangeException(nameof(LeaseLane), LeaseLane, $"LeaseKeeperOptions.LeaseLane is not a lane of {scheduler} ({scheduler.Lanes.Count} lanes).");
        }
    }
}
