using PriorityAsync.Benchmarks.LeaseLatency.Hosts;

namespace PriorityAsync.Benchmarks.LeaseLatency;

/// <summary>One cell of the harness: a scheduler, a slice length and kind, and a number of concurrent processors.</summary>
internal sealed record LeaseLatencyCell(LeaseHostKind Host, TimeSpan Slice, int Processors, SliceKind Kind = SliceKind.Spin)
{
    /// <summary>
    /// Gets the goal for PriorityAsync: p99 lateness at most 2 ms with a reserved lease worker, else at most one slice
    /// plus 1 ms.
    /// </summary>
    public TimeSpan Goal => LeaseHostFactory.IsReserved(Host) ? TimeSpan.FromMilliseconds(2) : Slice + TimeSpan.FromMilliseconds(1);

    /// <summary>Runs the cell for <paramref name="duration"/> of real time and returns its figures.</summary>
    public LeaseLatencyResult Run(TimeSpan duration, TimeSpan renewInterval)
    {
        using var starvation = LeaseHostFactory.StarvesThreadPool(Host) ? PriorityAsync.TestKit.StarvedThreadPool.Begin() : null;
        using var host = LeaseHostFactory.Create(Host);
        var recorder = new LatenessRecorder(renewInterval);
        var workload = new LeaseWorkload(Slice, Kind, renewInterval, host.TimeProvider, recorder);
        var tasks = new List<Task>(Processors + 1);
        for (var i = 0; i < Processors; i++)
        {
            tasks.Add(host.StartProcessor(workload.ProcessorAsync));
        }

        tasks.Add(host.StartLeaseLoop(workload.LeaseLoopAsync));
        Thread.Sleep(duration);
        workload.Stop();
        recorder.Close();
        var slicesRun = workload.SlicesRun;
        starvation?.Dispose();
        if (!Task.WaitAll([.. tasks], TimeSpan.FromSeconds(60)))
        {
            throw new TimeoutException($"The cell {this} did not drain within 60 s.");
        }

        return new LeaseLatencyResult(this, recorder.SortedSamples(), recorder.Censored, slicesRun / duration.TotalSeconds);
    }
}
