namespace LeaseSimulation.Timing;

/// <summary>
/// Samples a real-clock run from a dedicated thread (not a thread-pool timer, which a starved pool would delay).
/// </summary>
internal sealed class RealClockMonitor : IDisposable
{
    private readonly ManualResetEventSlim _stop = new();
    private readonly Thread _thread;

    public RealClockMonitor(ScenarioClock clock, TimeSpan period, Action<TimeSpan> sample)
    {
        _thread = new Thread(() =>
        {
            while (!_stop.Wait(period))
            {
                sample(clock.Now);
            }
        })
        {
            IsBackground = true,
            Name = "Lease simulation monitor",
        };
        _thread.Start();
    }

    public void Dispose()
    {
        _stop.Set();
        _thread.Join();
        _stop.Dispose();
    }
}
