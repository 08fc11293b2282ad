using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.MessagePump.Tests;

/// <summary>A logger that keeps every entry, for assertions on event ids.</summary>
internal sealed class ListLogger : ILogger
{
    public ConcurrentQueue<(EventId EventId, LogLevel Level, string Message, Exception? Exception)> Entries { get; } = new();

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => true;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
        Entries.Enqueue((eventId, logLevel, formatter(state, exception), exception));

    public override string ToString() => string.Join(Environment.NewLine, Entries.Select(e => $"{e.EventId.Id} {e.Level} {e.Message} {e.Exception?.GetType().Name}"));
}
