using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.Benchmarks.LeaseLoads;

/// <summary>
/// The library's log on standard error, each line with the seconds since the run began, when <c>LEASE_LOADS_LOG=1</c>
/// is set: to read when a lock was renewed, judged or lost on a load.
/// </summary>
internal sealed class LoadLog : ILogger
{
    private static readonly long Began = Stopwatch.GetTimestamp();

    private LoadLog()
    {
    }

    private static readonly bool Enabled = Environment.GetEnvironmentVariable("LEASE_LOADS_LOG") == "1";

    public static ILogger? FromArguments() => Enabled ? new LoadLog() : null;

    /// <summary>Writes what the application saw (a session event, a handler's start) among the library's lines.</summary>
    public static void Event(string what)
    {
        if (Enabled)
        {
            Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{Stopwatch.GetElapsedTime(Began).TotalSeconds,8:0.000} App             {what}"));
        }
    }

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Debug;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        var line = string.Create(CultureInfo.InvariantCulture, $"{Stopwatch.GetElapsedTime(Began).TotalSeconds,8:0.000} {logLevel,-11} {eventId.Id,3} {formatter(state, exception)}{(exception is null ? string.Empty : " | " + exception.GetType().Name + ": " + exception.Message)}");
        Console.Error.WriteLine(line);
    }
}
