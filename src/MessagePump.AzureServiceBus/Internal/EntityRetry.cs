namespace PriorityAsync.MessagePump.AzureServiceBus.Internal;

/// <summary>
/// The backoff of a source whose entity is missing or disabled (<see cref="ServiceBusErrors.IsEntityUnavailable"/>):
/// the next receive is sent <see cref="FirstDelay"/> after the first such failure, and each further failure in a row
/// doubles the wait, up to <see cref="MaxDelay"/>; a receive that succeeds starts over. So a queue created (or
/// re-created, or enabled) while the source runs is received from within <see cref="MaxDelay"/>, and a namespace
/// without it costs one attach every <see cref="MaxDelay"/>, each failure reported once. Thread-safe.
/// </summary>
internal sealed class EntityRetry(TimeProvider clock)
{
    /// <summary>The wait after the first failure: 1 second.</summary>
    public static readonly TimeSpan FirstDelay = TimeSpan.FromSeconds(1);

    /// <summary>The longest wait: 8 seconds (the fourth failure in a row and every one after it).</summary>
    public static readonly TimeSpan MaxDelay = TimeSpan.FromSeconds(8);

    private readonly Lock _gate = new();
    private int _failures;
    private DateTimeOffset _notBefore = DateTimeOffset.MinValue;

    /// <summary>Records a failure now; returns how long the next receive waits.</summary>
    /// <returns>The wait.</returns>
    public TimeSpan Failed()
    {
        lock (_gate)
        {
            _failures = Math.Min(_failures + 1, 16);
            var delay = DelayAfter(_failures);
            _notBefore = clock.GetUtcNow() + delay;
            return delay;
        }
    }

    /// <summary>Records a receive that reached the entity: the next failure waits <see cref="FirstDelay"/> again.</summary>
    public void Succeeded()
    {
        lock (_gate)
        {
            _failures = 0;
            _notBefore = DateTimeOffset.MinValue;
        }
    }

    /// <summary>Waits until the backoff of the last failure has passed; completes at once when there is none.</summary>
    /// <param name="cancellationToken">Ends the wait.</param>
    /// <returns>A task that completes when the next receive may be sent.</returns>
    public Task WaitAsync(CancellationToken cancellationToken)
    {
        DateTimeOffset notBefore;
        lock (_gate)
        {
            notBefore = _notBefore;
        }

        var wait = notBefore - clock.GetUtcNow();
        return wait > TimeSpan.Zero ? Task.Delay(wait, clock, cancellationToken) : Task.CompletedTask;
    }

    /// <summary>The wait after <paramref name="failures"/> failures in a row (at least 1): 1, 2, 4, then 8 seconds.</summary>
    internal static TimeSpan DelayAfter(int failures)
    {
        System.Diagnostics.Debug.Assert(failures >= 1, "a delay follows a failure");
        return failures >= 4 ? MaxDelay : FirstDelay * (1 << (failures - 1));
    }
}
