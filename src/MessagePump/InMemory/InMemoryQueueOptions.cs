using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

/// <summary>Options of one <see cref="InMemoryQueue"/>: its lease rules and optional fault injection.</summary>
public sealed class InMemoryQueueOptions
{
    /// <summary>
    /// Gets or sets how long a receive or a renewal locks a message. Defaults to 60 s (as Azure Service Bus); must be
    /// positive and at most <see cref="PrioritySchedulerOptions.MaxTimerDelay"/>.
    /// </summary>
    public TimeSpan LockDuration { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>
    /// Gets or sets how many deliveries a message gets: when the lock of the last one expires or is abandoned, the
    /// message is dead-lettered. Defaults to 10 (as Azure Service Bus); at least 1.
    /// </summary>
    public int MaxDeliveryCount { get; set; } = 10;

    /// <summary>Gets or sets the fraction (0 to 1) of renew calls that fail with <see cref="TransientTransportException"/>. Defaults to 0.</summary>
    public double RenewFailureRate { get; set; }

    /// <summary>Gets or sets the fraction (0 to 1) of complete calls that fail with <see cref="TransientTransportException"/>. Defaults to 0.</summary>
    public double CompleteFailureRate { get; set; }

    /// <summary>Gets or sets the seed of the random source that picks the failing calls, so runs repeat exactly. Defaults to 0.</summary>
    public int FaultSeed { get; set; }

    /// <summary>
    /// Gets or sets the latency added to every receive, renew and settle call, awaited on the broker's clock.
    /// Defaults to zero; at most <see cref="PrioritySchedulerOptions.MaxTimerDelay"/>.
    /// </summary>
    public TimeSpan Latency { get; set; }

    /// <summary>Throws when an option breaks its rule; the exception names the option.</summary>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole and has no parameter to name; ParamName names the offending option property, as documented, so a caller sees which option is wrong.")]
    internal void Validate()
    {
        if (LockDuration <= TimeSpan.Zero || LockDuration > PrioritySchedulerOptions.MaxTimerDelay)
        {
            throw new ArgumentOutOfRangeException(nameof(LockDuration), LockDuration, $"InMemoryQueueOptions.LockDuration must be positive and at most {PrioritySchedulerOptions.MaxTimerDelay} (the longest .NET timer).");
        }

        if (MaxDeliveryCount < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxDeliveryCount), MaxDeliveryCount, "InMemoryQueueOptions.MaxDeliveryCount must be at least 1.");
        }

        ThrowIfNotFraction(RenewFailureRate, nameof(RenewFailureRate));
        ThrowIfNotFraction(CompleteFailureRate, nameof(CompleteFailureRate));
        if (Latency < TimeSpan.Zero || Latency > PrioritySchedulerOptions.MaxTimerDelay)
        {
            throw new ArgumentOutOfRangeException(nameof(Latency), Latency, $"InMemoryQueueOptions.Latency must be between zero and {PrioritySchedulerOptions.MaxTimerDelay} (the longest .NET timer).");
        }
    }

    private static void ThrowIfNotFraction(double value, string name)
    {
        if (!(value >= 0 && value <= 1))
        {
            throw new ArgumentOutOfRangeException(name, value, $"InMemoryQueueOptions.{name} must be between 0 and 1.");
        }
    }
}
