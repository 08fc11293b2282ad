using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump.PostgreSql;

/// <summary>The settings of one queue, stored in <c>priorityasync.queues</c> by <see cref="PostgreSqlTransport.CreateQueueAsync"/>.</summary>
public sealed class PostgreSqlQueueOptions
{
    /// <summary>
    /// Gets or sets how long a receive or a renewal locks a message, on the database server's clock. Kept exactly to
    /// the microsecond (no rounding to seconds). Defaults to 60 s; must be at least 1 µs.
    /// </summary>
    public TimeSpan LockDuration { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>
    /// Gets or sets how many deliveries a message gets: a message whose last allowed delivery ended unsettled (lock
    /// expired or abandoned) is moved to the dead-letter table by the next receive that reaches it. Defaults to 10; at least 1.
    /// </summary>
    public int MaxDeliveryCount { get; set; } = 10;

    /// <summary>Throws when an option breaks its rule; the exception names the option.</summary>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole and has no parameter to name; ParamName names the offending option property, as documented, so a caller sees which option is wrong.")]
    internal void Validate()
    {
        if (LockDuration < TimeSpan.FromMicroseconds(1))
        {
            throw new ArgumentOutOfRangeException(nameof(LockDuration), LockDuration, "PostgreSqlQueueOptions.LockDuration must be at least 1 microsecond.");
        }

        if (MaxDeliveryCount < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxDeliveryCount), MaxDeliveryCount, "PostgreSqlQueueOptions.MaxDeliveryCount must be at least 1.");
        }
    }
}
