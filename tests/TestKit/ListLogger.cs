using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.TestKit;

/// <summary>A logger that keeps every entry, for assertions on event ids.</summary>
public sealed class ListLogger : ILogger
{
    /// <summary>Gets every entry logged so far, in order.</summary>
    public ConcurrentQueue<(EventId EventId, LogLevel Level, string Message, Exception? Exception)> Entries { get; } = new();

    /// <inheritdoc />
    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    /// <inheritdoc />
    public bool IsEnabled(LogLevel logLevel) => true;

    /// <inheritdoc />
    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
        Entries.Enqueue((eventId, logLevel, formatter(state, exception), exception));

    /// <summary>Returns every entry, one a line: event id, level, message and exception type.</summary>
    /// <returns>The entries as text.</returns>
    public override string ToString() => string.Join(Environment.NewLine, Entries.Select(e => $"{e.EventId.Id} {e.Level} {e.Message} {e.Exception?.GetType().Name}"));
}
