using System.Diagnostics;

namespace PriorityAsync.Benchmarks.LeaseLatency;

/// <summary>
/// Collects how late each lease renewal ran (actual wake-up minus due time, in real time). A renewal still waiting
/// when the cell ends, and already late, is counted with the lateness reached so far: a lower bound.
/// </summary>
internal sealed class LatenessRecorder
{
    private readonly object _gate = new();
    private readonly List<double> _latenessMs = [];
    private long _pendingDueTimestamp;
    private bool _censored;
    private bool _closed;

    /// <summary>Creates a recorder whose first renewal is due <paramref name="interval"/> after now.</summary>
    public LatenessRecorder(TimeSpan interval) => BeginWait(interval);

    /// <summary>Gets whether a renewal was still waiting, already late, when the cell ended.</summary>
    public bool Censored => _censored;

    /// <summary>Notes that a renewal is due <paramref name="interval"/> from now.</summary>
    public void BeginWait(TimeSpan interval)
    {
        var due = Stopwatch.GetTimestamp() + (long)(interval.TotalSeconds * Stopwatch.Frequency);
        Volatile.Write(ref _pendingDueTimestamp, due);
    }

    /// <summary>Records the renewal that was due as having run now; ignored once <see cref="Close"/> has run.</summary>
    public void EndWait()
    {
        var now = Stopwatch.GetTimestamp();
        var due = Interlocked.Exchange(ref _pendingDueTimestamp, 0);
        if (due == 0 || Volatile.Read(ref _closed))
        {
            return;
        }

        lock (_gate)
        {
            _latenessMs.Add(ToMilliseconds(now - due));
        }
    }

    /// <summary>Closes the cell: a renewal still pending and late is recorded as censored.</summary>
    public void Close()
    {
        Volatile.Write(ref _closed, true);
        var due = Interlocked.Exchange(ref _pendingDueTimestamp, 0);
        var now = Stopwatch.GetTimestamp();
        if (due != 0 && now > due)
        {
            lock (_gate)
            {
                _latenessMs.Add(ToMilliseconds(now - due));
                _censored = true;
            }
        }
    }

    /// <summary>Returns the samples, sorted ascending.</summary>
    public double[] SortedSamples()
    {
        lock (_gate)
        {
            var samples = _latenessMs.ToArray();
            Array.Sort(samples);
            return samples;
        }
    }

    private static double ToMilliseconds(long ticks) => Math.Max(0, ticks * 1000.0 / Stopwatch.Frequency);
}
