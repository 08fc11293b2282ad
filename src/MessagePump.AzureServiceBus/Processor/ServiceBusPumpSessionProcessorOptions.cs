using System.Diagnostics.CodeAnalysis;
using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// The options of a <see cref="ServiceBusPumpSessionProcessor"/>, named like <see cref="ServiceBusSessionProcessorOptions"/>'s
/// so that a session processor's options move over as they are. Checked when the processor is created; a value that
/// breaks its rule throws naming the option.
/// </summary>
public sealed class ServiceBusPumpSessionProcessorOptions
{
    /// <summary>
    /// Gets or sets how many sessions are held at once, each with at most one message out: also the pump's
    /// <see cref="MessagePumpOptions.MaxInFlight"/>. Default 8 (the SDK's); at least 1, with no upper bound (as the
    /// SDK's): each held session is a session receiver and its lock's renewals, so hold only as many as you handle.
    /// </summary>
    public int MaxConcurrentSessions { get; set; } = 8;

    /// <summary>
    /// Gets or sets how many messages of one session are handled at once. Only 1 (the default, the SDK's) is accepted:
    /// a session's messages are handed out one at a time, in order, the next once the previous one is settled.
    /// </summary>
    public int MaxConcurrentCallsPerSession { get; set; } = 1;

    /// <summary>
    /// Gets the only sessions to process, as <see cref="ServiceBusSessionProcessorOptions.SessionIds"/>: each is accepted
    /// by its id, in turn, up to <see cref="MaxConcurrentSessions"/> at once. Empty (the default): the next session that
    /// has messages. No id may be empty or white space.
    /// </summary>
    public IList<string> SessionIds { get; private set; } = [];

    /// <summary>
    /// Gets or sets how long a held session may go without a message before it is closed (released to other
    /// consumers), as <see cref="ServiceBusSessionProcessorOptions.SessionIdleTimeout"/>: the wait of the session's
    /// receive. <see langword="null"/> (the default): the receive's wait, <see cref="ServiceBusSourceOptions.MaxWaitTime"/>
    /// (2 s). Positive when given.
    /// </summary>
    public TimeSpan? SessionIdleTimeout { get; set; }

    /// <summary>
    /// Gets or sets whether a message the handler did not settle is completed when the handler returns. Default
    /// <see langword="true"/>; with <see langword="false"/> it is abandoned at once (see <see cref="ServiceBusPumpProcessorOptions.AutoCompleteMessages"/>).
    /// </summary>
    public bool AutoCompleteMessages { get; set; } = true;

    /// <summary>
    /// Gets or sets how long one handler call may run before its token is canceled; the session lock is renewed until
    /// the handler returns (see <see cref="ServiceBusPumpProcessorOptions.MaxAutoLockRenewalDuration"/>). Default 5
    /// minutes; positive, or <see cref="Timeout.InfiniteTimeSpan"/>.
    /// </summary>
    public TimeSpan MaxAutoLockRenewalDuration { get; set; } = ServiceBusPumpProcessorOptions.DefaultMaxAutoLockRenewalDuration;

    /// <summary>Gets or sets each session receiver's prefetch count (<see cref="ServiceBusSourceOptions.PrefetchCount"/>). Default 0: keep it there.</summary>
    public int PrefetchCount { get; set; }

    /// <summary>Gets or sets the receive mode. Only <see cref="ServiceBusReceiveMode.PeekLock"/> (the default) is accepted.</summary>
    public ServiceBusReceiveMode ReceiveMode { get; set; } = ServiceBusReceiveMode.PeekLock;

    /// <summary>Gets or sets the entity's lock duration when it cannot be read from the entity (<see cref="ServiceBusSourceOptions.LockDuration"/>).</summary>
    public TimeSpan? LockDuration { get; set; }

    /// <summary>
    /// Gets or sets how long <see cref="ServiceBusPumpSessionProcessor.StopProcessingAsync"/> lets running handlers
    /// finish before it cancels their tokens and abandons their messages. Default <see cref="MessagePumpOptions.DefaultShutdownTimeout"/>.
    /// Zero: the stop does not wait for handlers: it cancels their tokens at once and abandons their messages (a
    /// settlement already under way still gets its answer, bounded by the lock), so nothing is left locked, and
    /// closes the sessions once those handlers have ended. <see cref="Timeout.InfiniteTimeSpan"/>: the stop waits
    /// for every handler. Any other negative value is refused.
    /// </summary>
    public TimeSpan ShutdownTimeout { get; set; } = MessagePumpOptions.DefaultShutdownTimeout;

    /// <summary>Gets or sets the scheduler whose lanes the processor runs in; <see langword="null"/> (the default): one of its own.</summary>
    public PriorityScheduler? Scheduler { get; set; }

    /// <summary>
    /// Gets or sets the processor's identifier (the pump's name, <see cref="ProcessErrorEventArgs.Identifier"/>).
    /// <see langword="null"/> or empty (the default): the entity path, a dash and a new GUID, as the SDK's.
    /// </summary>
    public string? Identifier { get; set; }

    /// <summary>Gets or sets the logger of the pump and of error handlers that throw; <see langword="null"/> (the default) for none.</summary>
    public ILogger? Logger { get; set; }

    /// <summary>Copies the options (and the list of session ids).</summary>
    /// <returns>The copy.</returns>
    public ServiceBusPumpSessionProcessorOptions Clone()
    {
        var copy = (ServiceBusPumpSessionProcessorOptions)MemberwiseClone();
        copy.SessionIds = [.. SessionIds];
        return copy;
    }

    /// <summary>Throws when an option breaks its rule.</summary>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range; the exception names it.</exception>
    /// <exception cref="ArgumentException">A session id is empty, or <see cref="Identifier"/> is white space only.</exception>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole; ParamName names the offending option property, as documented (as MessagePumpOptions.Validate does).")]
    [SuppressMessage("Usage", "CA2208:Instantiate argument exceptions correctly", Justification = "Validate checks the options object as a whole; ParamName names the offending option property, as documented (as MessagePumpOptions.Validate does).")]
    public void Validate()
    {
        if (MaxConcurrentSessions < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxConcurrentSessions), MaxConcurrentSessions, "ServiceBusPumpSessionProcessorOptions.MaxConcurrentSessions must be at least 1.");
        }

        if (MaxConcurrentCallsPerSession != 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxConcurrentCallsPerSession), MaxConcurrentCallsPerSession, "ServiceBusPumpSessionProcessorOptions.MaxConcurrentCallsPerSession must be 1: a session's messages are handed out one at a time, in order (raise MaxConcurrentSessions for more handlers at once).");
        }

        if (SessionIds is null || SessionIds.Any(string.IsNullOrWhiteSpace))
        {
            throw new ArgumentException("ServiceBusPumpSessionProcessorOptions.SessionIds must not contain an empty or white-space session id.", nameof(SessionIds));
        }

        if (SessionIdleTimeout is { } idle && idle <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(SessionIdleTimeout), idle, "ServiceBusPumpSessionProcessorOptions.SessionIdleTimeout must be positive, or null for the receive's wait.");
        }

        // The options both processor shapes have are checked by the other's rules (one set of rules, one place).
        new ServiceBusPumpProcessorOptions
        {
            AutoCompleteMessages = AutoCompleteMessages,
            MaxAutoLockRenewalDuration = MaxAutoLockRenewalDuration,
            PrefetchCount = PrefetchCount,
            ReceiveMode = ReceiveMode,
            LockDuration = LockDuration,
            ShutdownTimeout = ShutdownTimeout,
            Identifier = Identifier,
        }.ValidateAs(nameof(ServiceBusPumpSessionProcessorOptions));
    }

    /// <summary>The source's options these options imply.</summary>
    internal ServiceBusSourceOptions SourceOptions() => new() { PrefetchCount = PrefetchCount, LockDuration = LockDuration };

    /// <summary>The pump's options these options imply (named by <see cref="Identifier"/>, which the processor has set).</summary>
    internal MessagePumpOptions PumpOptions()
    {
        var options = new MessagePumpOptions { MaxInFlight = MaxConcurrentSessions, ShutdownTimeout = ShutdownTimeout };
        if (!string.IsNullOrEmpty(Identifier))
        {
            options.Name = Identifier;
        }

        return options;
    }
}
