using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump.PostgreSql;

/// <summary>Options of a <see cref="PostgreSqlTransport"/>: how an idle receive waits.</summary>
public sealed class PostgreSqlTransportOptions
{
    /// <summary>
    /// Gets or sets how long <see cref="PostgreSqlQueue.ReceiveAsync(CancellationToken)"/> waits for a message when the
    /// queue is empty before it returns <see langword="null"/> (a long poll, like Service Bus's <c>maxWaitTime</c>).
    /// It wakes at once on a NOTIFY from a sender or an abandon. Defaults to 5 s; zero returns at once; must not be negative.
    /// </summary>
    public TimeSpan ReceiveWaitTime { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Gets or sets how often a waiting receive looks at the queue even without a notification: locks that expire
    /// make messages visible without any NOTIFY, and a notification can be missed while the listener reconnects.
    /// Defaults to 1 s; must be positive.
    /// </summary>
    public TimeSpan PollInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Returns a copy.</summary>
    internal PostgreSqlTransportOptions Clone() => (PostgreSqlTransportOptions)MemberwiseClone();

    /// <summary>Throws when an option breaks its rule; the exception names the option.</summary>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole and has no parameter to name; ParamName names the offending option property, as documented, so a caller sees which option is wrong.")]
    internal void Validate()
    {
        if (ReceiveWaitTime < TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveWaitTime), ReceiveWaitTime, "PostgreSqlTransportOptions.ReceiveWaitTime must not be negative.");
        }

        if (PollInterval <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(PollInterval), PollInterval, "PostgreSqlTransportOptions.PollInterval must be positive.");
        }
    }
}
