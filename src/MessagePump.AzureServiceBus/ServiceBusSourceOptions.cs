using System.Diagnostics.CodeAnalysis;
using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>The options of a <see cref="ServiceBusMessageSource"/> or a <see cref="ServiceBusSessionMessageSource"/>.</summary>
public sealed class ServiceBusSourceOptions
{
    /// <summary>The default of <see cref="MaxWaitTime"/>: 2 seconds.</summary>
    internal static readonly TimeSpan DefaultMaxWaitTime = TimeSpan.FromSeconds(2);

    /// <summary>
    /// Gets or sets the entity's lock duration. Used when the entity's own setting cannot be read (the credentials lack
    /// the Manage right, or <see cref="ServiceBusTransportOptions.ReadEntityProperties"/> is off); when both are known
    /// they must agree. Checked against the locks of the first receive: a value that differs from them by more than
    /// <see cref="LockDurationTolerance"/> faults the source. <see langword="null"/> (the default): read it from the entity.
    /// </summary>
    public TimeSpan? LockDuration { get; set; }

    /// <summary>
    /// Gets or sets how far the lock seen at the first receive may differ from <see cref="LockDuration"/> (clock skew
    /// between this machine and the broker). The receive's own round trip is allowed for on top of it: an answer that
    /// waited (for a thread of a starved pool, say) makes the lock look shorter, not wrong. Default 2 seconds.
    /// </summary>
    public TimeSpan LockDurationTolerance { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// Gets or sets the receiver's prefetch count. Default 0, and keep it there: a prefetched message is locked by the
    /// broker when it enters the client's buffer, its lock runs while it waits there, and nobody can renew it before the
    /// pump sees it (azure-sdk-for-net #23704). With a prefetch count, up to that many messages are locked and waiting
    /// on top of the pump's <see cref="MessagePumpOptions.MaxInFlight"/>; see <c>docs/azure-service-bus.md</c>.
    /// </summary>
    public int PrefetchCount { get; set; }

    /// <summary>
    /// Gets or sets how long one receive waits for a first message when the entity is empty. The receive call itself is
    /// never canceled (a canceled call could leave messages locked and unseen), so a stopping pump waits up to this long
    /// for its last receive. Default <see cref="DefaultMaxWaitTime"/>.
    /// </summary>
    public TimeSpan MaxWaitTime { get; set; } = DefaultMaxWaitTime;

    /// <summary>
    /// Gets or sets the sub-queue to receive from: <see cref="SubQueue.DeadLetter"/> (the entity's
    /// <c>$deadletterqueue</c>) or <see cref="SubQueue.TransferDeadLetter"/>, as <see cref="ServiceBusReceiverOptions.SubQueue"/>.
    /// Default <see cref="SubQueue.None"/>: the entity itself. A sub-queue has no sessions: the session sources refuse one.
    /// </summary>
    public SubQueue SubQueue { get; set; }

    /// <summary>
    /// Gets or sets the clock of the source's lock timing: it bounds each settlement by its lock, measures the lock seen
    /// at the first receive, and times a session lock's renewals and its expiry (the keeper of a session's lock runs on
    /// it, in the lease lane of the pump's scheduler). Set it to a fake clock to test with virtual time.
    /// <see langword="null"/> (the default): the scheduler's clock for a session lock kept in a pump's scheduler, the
    /// system clock otherwise.
    /// </summary>
    /// <remarks>A clock whose <see cref="TimeProvider.GetUtcNow"/> is not in UTC breaks every lock comparison; <see cref="Validate"/> refuses it.</remarks>
    public TimeProvider? TimeProvider { get; set; }

    /// <summary>Throws when <see cref="SubQueue"/> names a sub-queue: a session source cannot receive from one.</summary>
    /// <param name="paramName">The parameter the options came in.</param>
    internal void ThrowIfSubQueue(string paramName)
    {
        if (SubQueue != SubQueue.None)
        {
            throw new ArgumentException($"ServiceBusSourceOptions.SubQueue is {SubQueue}: a dead-letter sub-queue has no sessions; receive from it with ServiceBusTransport.OpenAsync (or a ServiceBusPumpProcessor with the option).", paramName);
        }
    }

    /// <summary>Copies the options.</summary>
    /// <returns>The copy.</returns>
    internal ServiceBusSourceOptions Clone() => (ServiceBusSourceOptions)MemberwiseClone();

    /// <summary>Throws when an option breaks its rule.</summary>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range; the exception names it.</exception>
    internal void Validate() => ValidateAs(nameof(ServiceBusSourceOptions));

    /// <summary>Throws when an option breaks its rule.</summary>
    /// <param name="owner">The options type the user set them on, named in the message (a processor's options carry some of these).</param>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range; the exception names it.</exception>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole; ParamName names the offending option property, as documented (as MessagePumpOptions.Validate does).")]
    [SuppressMessage("Usage", "CA2208:Instantiate argument exceptions correctly", Justification = "Validate checks the options object as a whole; ParamName names the offending option property, as documented (as MessagePumpOptions.Validate does).")]
    internal void ValidateAs(string owner)
    {
        if (LockDuration is { } lockDuration && lockDuration <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(LockDuration), lockDuration, $"{owner}.LockDuration must be greater than zero (Service Bus allows 5 seconds to 5 minutes).");
        }

        if (LockDurationTolerance < TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(LockDurationTolerance), LockDurationTolerance, $"{owner}.LockDurationTolerance must not be negative.");
        }

        if (PrefetchCount < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(PrefetchCount), PrefetchCount, $"{owner}.PrefetchCount must not be negative (0 turns prefetch off).");
        }

        if (!Enum.IsDefined(SubQueue))
        {
            throw new ArgumentOutOfRangeException(nameof(SubQueue), SubQueue, $"{owner}.SubQueue must be None, DeadLetter or TransferDeadLetter.");
        }

        if (MaxWaitTime <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxWaitTime), MaxWaitTime, $"{owner}.MaxWaitTime must be greater than zero.");
        }

        if (TimeProvider is { } clock && clock.GetUtcNow().Offset != TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(TimeProvider), clock, $"{owner}.TimeProvider must tell UTC time (GetUtcNow with a zero offset): the locks' expiries are UTC.");
        }
    }
}
