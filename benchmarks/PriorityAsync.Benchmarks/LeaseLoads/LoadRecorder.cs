using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using Azure.Messaging.ServiceBus;

namespace PriorityAsync.Benchmarks.LeaseLoads;

/// <summary>
/// What one consumer's run did, as the application sees it: handler calls per message (a second call is a
/// redelivery), the lock time left when each handler started (from the message's own <c>LockedUntil</c>), the time
/// sessions were held or messages handled, handlers that saw their token canceled, and the errors reported.
/// </summary>
internal sealed class LoadRecorder
{
    private readonly ConcurrentDictionary<string, int> _calls = new(StringComparer.Ordinal);
    private readonly ConcurrentQueue<double> _headroomMs = new();
    private readonly ConcurrentDictionary<string, long> _heldSince = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, int> _errors = new(StringComparer.Ordinal);
    private long _heldTicks;
    private int _canceled;

    public int Redeliveries => _calls.Values.Sum(count => count - 1);

    public int Handled => _calls.Count;

    public int Canceled => Volatile.Read(ref _canceled);

    public TimeSpan Held => Stopwatch.GetElapsedTime(0, Interlocked.Read(ref _heldTicks));

    public IReadOnlyDictionary<string, int> Errors => _errors;

    public int ErrorsWith(ServiceBusFailureReason reason) => _errors.Where(pair => pair.Key.EndsWith(":" + reason, StringComparison.Ordinal)).Sum(pair => pair.Value);

    /// <summary>
    /// Counts a handler's start: its message's headroom, and a redelivery when the message was handled before. Returns
    /// when the message's life began, as a timestamp: when the broker locked it, the lock left now subtracted from the
    /// lock duration (a lock renewed before the hand-off makes the life look shorter, so renewals per lock duration of a
    /// life err high).
    /// </summary>
    public long HandlerStarted(string messageId, DateTimeOffset lockedUntil, TimeSpan lockDuration)
    {
        var headroom = lockedUntil - DateTimeOffset.UtcNow;
        _headroomMs.Enqueue(headroom.TotalMilliseconds);
        _calls.AddOrUpdate(messageId, 1, static (_, count) => count + 1);
        LoadLog.Event($"handler of {messageId} starts, {headroom.TotalMilliseconds:0} ms of lock left");
        var sinceLocked = lockDuration - headroom;
        return Stopwatch.GetTimestamp() - (sinceLocked > TimeSpan.Zero ? (long)(sinceLocked.TotalSeconds * Stopwatch.Frequency) : 0);
    }

    /// <summary>Adds a message's life, from its lock to its handler's end (the settlement follows), to the held time (the processors' loads).</summary>
    public void HandlerEnded(long lifeBegan) => Interlocked.Add(ref _heldTicks, Stopwatch.GetTimestamp() - lifeBegan);

    public void HandlerCanceled()
    {
        LoadLog.Event("a handler saw its token canceled");
        Interlocked.Increment(ref _canceled);
    }

    public void SessionOpened(string sessionId)
    {
        LoadLog.Event($"session {sessionId} initializing");
        _heldSince[sessionId] = Stopwatch.GetTimestamp();
    }

    public void SessionClosed(string sessionId)
    {
        LoadLog.Event($"session {sessionId} closing");
        if (_heldSince.TryRemove(sessionId, out var since))
        {
            Interlocked.Add(ref _heldTicks, Stopwatch.GetTimestamp() - since);
        }
    }

    /// <summary>Closes every session still open at the end of the run, so its time held counts.</summary>
    public void CloseOpenSessions()
    {
        foreach (var sessionId in _heldSince.Keys.ToArray())
        {
            SessionClosed(sessionId);
        }
    }

    public void Error(ServiceBusErrorSource source, Exception exception)
    {
        var reason = exception is ServiceBusException serviceBus ? serviceBus.Reason.ToString() : exception.GetType().Name;
        _errors.AddOrUpdate($"{source}:{reason}", 1, static (_, count) => count + 1);
    }

    public string Headroom()
    {
        var sorted = _headroomMs.Order().ToArray();
        return sorted.Length == 0
            ? "none"
            : string.Create(CultureInfo.InvariantCulture, $"least {sorted[0]:0} ms, median {sorted[sorted.Length / 2]:0} ms");
    }

    public string DescribeErrors() => _errors.IsEmpty ? "none" : string.Join(", ", _errors.OrderBy(pair => pair.Key, StringComparer.Ordinal).Select(pair => $"{pair.Key}×{pair.Value}"));
}
