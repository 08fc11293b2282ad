using System.Diagnostics.CodeAnalysis;
using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// The options of a <see cref="ServiceBusPumpProcessor"/>, named like <see cref="ServiceBusProcessorOptions"/>'s so
/// that a processor's options move over as they are. Checked when the processor is created; a value that breaks its
/// rule throws naming the option.
/// </summary>
public sealed class ServiceBusPumpProcessorOptions
{
    /// <summary>The default of <see cref="MaxAutoLockRenewalDuration"/>: 5 minutes, as the SDK's.</summary>
    public static readonly TimeSpan DefaultMaxAutoLockRenewalDuration = TimeSpan.FromMinutes(5);

    /// <summary>
    /// Gets or sets how many messages are handled at once: the pump's <see cref="MessagePumpOptions.MaxInFlight"/>.
    /// The pump receives only when its lanes have spare capacity, so this is a cap, not a target. Default 1 (the SDK's);
    /// at least 1, with no upper bound (as the SDK's): nothing is allocated by it, and a receive asks the broker for at
    /// most the free slots its admission grants, so <see cref="int.MaxValue"/> means "as many as the lanes take".
    /// With <see cref="ReceiveDuringSettlement"/> on, up to as many more are locked while their completes are answered.
    /// </summary>
    public int MaxConcurrentCalls { get; set; } = 1;

    /// <summary>
    /// Gets or sets whether the next receive may go out while the broker answers a complete, abandon or dead-letter: the
    /// pump's <see cref="MessagePumpOptions.ReceiveDuringSettlement"/>. Default <see langword="true"/> (about one round trip
    /// per message instead of two at one call at a time; up to 2 × <see cref="MaxConcurrentCalls"/> locked at once);
    /// <see langword="false"/> holds at most <see cref="MaxConcurrentCalls"/> locks, as <c>ServiceBusProcessor</c> does.
    /// </summary>
    public bool ReceiveDuringSettlement { get; set; } = true;

    /// <summary>
    /// Gets or sets whether a message the handler did not settle is completed when the handler returns. Default
    /// <see langword="true"/>. With <see langword="false"/>, a message the handler returns without settling is
    /// abandoned at once (the SDK leaves it locked, unrenewed, until its lock runs out; the pump leaves nothing locked).
    /// A handler that throws gets its message abandoned either way, unless it settled it first.
    /// </summary>
    public bool AutoCompleteMessages { get; set; } = true;

    /// <summary>
    /// Gets or sets how long one handler call may run before its <see cref="ServiceBusPumpMessageEventArgs.CancellationToken"/>
    /// is canceled. The SDK stops renewing the lock at that point and lets it run out while the handler still runs; the
    /// pump instead keeps renewing until the handler returns (a lock is never lost to this limit) and asks the handler
    /// to stop. Default <see cref="DefaultMaxAutoLockRenewalDuration"/>; positive, or <see cref="Timeout.InfiniteTimeSpan"/>
    /// for no limit. Zero (the SDK's "do not renew") is refused: renewing in the lease lane is what the pump is for.
    /// </summary>
    public TimeSpan MaxAutoLockRenewalDuration { get; set; } = DefaultMaxAutoLockRenewalDuration;

    /// <summary>
    /// Gets or sets the receiver's prefetch count (<see cref="ServiceBusSourceOptions.PrefetchCount"/>). Default 0, and
    /// keep it there: a prefetched message's lock runs while it waits in the client's buffer, unrenewed.
    /// </summary>
    public int PrefetchCount { get; set; }

    /// <summary>
    /// Gets or sets the receive mode. Only <see cref="ServiceBusReceiveMode.PeekLock"/> (the default) is accepted: a
    /// message received and deleted has no lock to renew and cannot be abandoned or dead-lettered.
    /// </summary>
    public ServiceBusReceiveMode ReceiveMode { get; set; } = ServiceBusReceiveMode.PeekLock;

    /// <summary>
    /// Gets or sets the sub-queue to process, as <see cref="ServiceBusProcessorOptions.SubQueue"/>: <see cref="SubQueue.DeadLetter"/>
    /// processes the entity's dead-letter queue, <see cref="SubQueue.TransferDeadLetter"/> its transfer dead-letter queue
    /// (<see cref="ServiceBusSourceOptions.SubQueue"/>). Default <see cref="SubQueue.None"/>: the entity itself.
    /// </summary>
    public SubQueue SubQueue { get; set; }

    /// <summary>
    /// Gets or sets the entity's lock duration when it cannot be read from the entity (<see cref="ServiceBusSourceOptions.LockDuration"/>).
    /// <see langword="null"/> (the default): read it from the entity, or from the first receive.
    /// </summary>
    public TimeSpan? LockDuration { get; set; }

    /// <summary>
    /// Gets or sets how long <see cref="ServiceBusPumpProcessor.StopProcessingAsync"/> lets running handlers finish
    /// before it cancels their tokens and abandons their messages (<see cref="MessagePumpOptions.ShutdownTimeout"/>).
    /// Default 25 seconds (<see cref="MessagePumpOptions.DefaultShutdownTimeout"/>): 5 s below the generic host's default
    /// shutdown timeout, so that a hosted processor stopped with the defaults returns before the host gives up on it.
    /// Zero: the stop does not wait for handlers: it cancels their tokens at once and abandons their messages (a
    /// settlement already under way still gets its answer, bounded by the lock), so nothing is left locked.
    /// <see cref="Timeout.InfiniteTimeSpan"/>: the stop waits for every handler. Any other negative value is refused.
    /// </summary>
    public TimeSpan ShutdownTimeout { get; set; } = MessagePumpOptions.DefaultShutdownTimeout;

    /// <summary>
    /// Gets or sets the scheduler whose lanes the processor runs in. <see langword="null"/> (the default): the processor
    /// creates a <see cref="PriorityTaskScheduler"/> with its default workers and disposes it with itself.
    /// </summary>
    public PriorityScheduler? Scheduler { get; set; }

    /// <summary>
    /// Gets or sets the processor's identifier: the pump's name (the <see cref="MessagePumpDiagnostics.PumpTag"/> of its
    /// metrics, its logs) and <see cref="ProcessErrorEventArgs.Identifier"/>. <see langword="null"/> or empty (the
    /// default): each processor makes its own, as <c>ServiceBusProcessor</c> does: the entity path, a dash and a new
    /// GUID (<c>orders-3f2c…</c>), so that two processors never share their metrics. A value given is kept.
    /// </summary>
    public string? Identifier { get; set; }

    /// <summary>Gets or sets the logger of the pump and of error handlers that throw; <see langword="null"/> (the default) for none.</summary>
    public ILogger? Logger { get; set; }

    /// <summary>Copies the options.</summary>
    /// <returns>The copy.</returns>
    public ServiceBusPumpProcessorOptions Clone() => (ServiceBusPumpProcessorOptions)MemberwiseClone();

    /// <summary>Throws when an option breaks its rule.</summary>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range; the exception names it.</exception>
    /// <exception cref="ArgumentException"><see cref="Identifier"/> is white space only.</exception>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole; ParamName names the offending option property, as documented (as MessagePumpOptions.Validate does).")]
    [SuppressMessage("Usage", "CA2208:Instantiate argument exceptions correctly", Justification = "Validate checks the options object as a whole; ParamName names the offending option property, as documented (as MessagePumpOptions.Validate does).")]
    public void Validate() => ValidateAs(nameof(ServiceBusPumpProcessorOptions));

    /// <summary>Throws when an option breaks its rule, naming <paramref name="owner"/> (the session processor's options check the options they share with these by the same rules).</summary>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole; ParamName names the offending option property, as documented (as MessagePumpOptions.Validate does).")]
    [SuppressMessage("Usage", "CA2208:Instantiate argument exceptions correctly", Justification = "Validate checks the options object as a whole; ParamName names the offending option property, as documented (as MessagePumpOptions.Validate does).")]
    internal void ValidateAs(string owner)
    {
        if (MaxConcurrentCalls < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxConcurrentCalls), MaxConcurrentCalls, $"{owner}.MaxConcurrentCalls must be at least 1.");
        }

        if (MaxAutoLockRenewalDuration <= TimeSpan.Zero && MaxAutoLockRenewalDuration != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxAutoLockRenewalDuration), MaxAutoLockRenewalDuration, $"{owner}.MaxAutoLockRenewalDuration must be positive, or Timeout.InfiniteTimeSpan for no limit: the pump always renews locks while a handler runs, so zero (the SDK's 'do not renew') has no meaning here.");
        }

        if (ReceiveMode != ServiceBusReceiveMode.PeekLock)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveMode), ReceiveMode, $"{owner}.ReceiveMode must be PeekLock: a message received in ReceiveAndDelete mode has no lock to renew, abandon or dead-letter.");
        }

        if (!string.IsNullOrEmpty(Identifier) && string.IsNullOrWhiteSpace(Identifier))
        {
            throw new ArgumentException($"{owner}.Identifier must not be white space only: leave it null (or empty) for one made from the entity path, or name the processor.", nameof(Identifier));
        }

        if (ShutdownTimeout < TimeSpan.Zero && ShutdownTimeout != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(ShutdownTimeout), ShutdownTimeout, $"{owner}.ShutdownTimeout must be zero or positive, or Timeout.InfiniteTimeSpan.");
        }

        SourceOptions().ValidateAs(owner);
    }

    /// <summary>The source's options these options imply.</summary>
    internal ServiceBusSourceOptions SourceOptions() => new() { PrefetchCount = PrefetchCount, LockDuration = LockDuration, SubQueue = SubQueue };

    /// <summary>The pump's options these options imply.</summary>
    /// <remarks>The pump is named by <see cref="Identifier"/>, which the processor has set (to its default when none was given).</remarks>
    internal MessagePumpOptions PumpOptions()
    {
        var options = new MessagePumpOptions { MaxInFlight = MaxConcurrentCalls, ShutdownTimeout = ShutdownTimeout, ReceiveDuringSettlement = ReceiveDuringSettlement };
        if (!string.IsNullOrEmpty(Identifier))
        {
            options.Name = Identifier;
        }

        return options;
    }
}
