using System.Diagnostics;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.ServiceBus;

/// <summary>
/// Wraps a source and stamps, per receive and per complete call, when the pump called it and when the broker's answer
/// came back, and per message when its handler ran: the breakdown of where one message's time goes.
/// </summary>
internal sealed class TimedSource(IMessageSource inner) : IMessageSource
{
    private readonly Lock _gate = new();
    private readonly List<(string Event, long At)> _events = [];

    public bool CompletesBatchesNatively => inner.CompletesBatchesNatively;

    public TimeSpan? LockDuration => inner.LockDuration;

    public string MessagingSystem => inner.MessagingSystem;

    public string? DestinationName => inner.DestinationName;

    public void Stamp(string name)
    {
        var at = Stopwatch.GetTimestamp();
        lock (_gate)
        {
            _events.Add((name, at));
        }
    }

    public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) => inner.ReceiveAsync(cancellationToken);

    public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        Stamp("receive-call");
        var call = inner.ReceiveBatchAsync(maxMessages, cancellationToken);
        _ = call.ContinueWith(_ => Stamp("receive-answer"), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        var result = await call.ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext);
        Stamp("receive-back-in-lane");
        return [.. result.Select(m => (ILeasedMessage)new TimedMessage(this, m))];
    }

    public async Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        Stamp("complete-call");
        var call = inner.CompleteBatchAsync(messages, cancellationToken);
        _ = call.ContinueWith(_ => Stamp("complete-answer"), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        var result = await call.ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext);
        Stamp("complete-back-in-lane");
        return result;
    }

    /// <summary>Prints the median and mean time from each event to the next one, per kind of transition (the last receive of a run waits out its MaxWaitTime, so read the median).</summary>
    public void Print(TextWriter writer)
    {
        List<(string Event, long At)> events;
        lock (_gate)
        {
            events = [.. _events];
        }

        events.Sort((a, b) => a.At.CompareTo(b.At));
        var spans = new Dictionary<string, List<double>>(StringComparer.Ordinal);
        for (var i = 1; i < events.Count; i++)
        {
            var key = $"{events[i - 1].Event} -> {events[i].Event}";
            var us = Stopwatch.GetElapsedTime(events[i - 1].At, events[i].At).TotalMicroseconds;
            if (!spans.TryGetValue(key, out var list))
            {
                spans[key] = list = [];
            }

            list.Add(us);
        }

        foreach (var (key, list) in spans.OrderByDescending(p => p.Value.Sum()))
        {
            list.Sort();
            writer.WriteLine($"  {key,-50} n={list.Count,6} median={list[list.Count / 2],8:0.0} us mean={list.Average(),8:0.0} us total={list.Sum() / 1000,8:0.0} ms");
        }
    }

    private sealed class TimedMessage(TimedSource source, ILeasedMessage inner) : ILeasedMessage
    {
        public string MessageId => inner.MessageId;

        public ReadOnlyMemory<byte> Body => inner.Body;

        public int DeliveryCount => inner.DeliveryCount;

        public DateTimeOffset LockedUntil => inner.LockedUntil;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => inner.RenewLockAsync(cancellationToken);

        public async Task CompleteAsync(CancellationToken cancellationToken = default)
        {
            source.Stamp("complete-call");
            var call = inner.CompleteAsync(cancellationToken);
            _ = call.ContinueWith(_ => source.Stamp("complete-answer"), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            await call.ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext);
            source.Stamp("complete-back-in-lane");
        }

        public Task AbandonAsync(CancellationToken cancellationToken = default) => inner.AbandonAsync(cancellationToken);

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => inner.DeadLetterAsync(reason, cancellationToken);
    }
}
