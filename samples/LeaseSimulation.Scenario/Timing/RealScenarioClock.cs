using System.Diagnostics;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Timing;

/// <summary>Scenario time on the wall clock, every duration multiplied by a scale (0.01 turns 1 s into 10 ms).</summary>
public sealed class RealScenarioClock : ScenarioClock
{
    private readonly Stopwatch _stopwatch = Stopwatch.StartNew();
    private readonly double _scale;
    private readonly CpuMode _cpuMode;

    /// <summary>Creates a real clock that starts now.</summary>
    /// <param name="scale">Clock time per scenario time; positive.</param>
    /// <param name="cpuMode">How a CPU operation holds the thread.</param>
    public RealScenarioClock(double scale, CpuMode cpuMode)
    {
        if (!(scale > 0))
        {
            throw new ArgumentOutOfRangeException(nameof(scale), scale, "The time scale must be positive.");
        }

        _scale = scale;
        _cpuMode = cpuMode == CpuMode.Work && !ThreadCpuTime.IsSupported ? CpuMode.Spin : cpuMode;
    }

    /// <summary>Gets the CPU mode in force: the one asked for, or <see cref="CpuMode.Spin"/> for an unsupported <see cref="CpuMode.Work"/>.</summary>
    public CpuMode CpuMode => _cpuMode;

    /// <inheritdoc />
    public override TimeSpan Now => _stopwatch.Elapsed / _scale;

    /// <inheritdoc />
    public override TimeProvider TimeProvider => TimeProvider.System;

    /// <inheritdoc />
    public override void HoldThread(TimeSpan duration)
    {
        var clockTime = ToClockTime(duration);
        if (_cpuMode == CpuMode.Sleep)
        {
            Thread.Sleep(clockTime);
            return;
        }

        if (_cpuMode == CpuMode.Work)
        {
            ConservedCpuWork.Run(clockTime, ThreadCpuTime.Now);
            return;
        }

        var end = Stopwatch.GetTimestamp() + (long)(clockTime.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < end)
        {
            Thread.SpinWait(64);
        }
    }

    /// <inheritdoc />
    public override IDisposable StartMonitor(TimeSpan interval, Action<TimeSpan> sample)
    {
        ArgumentNullException.ThrowIfNull(sample);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(interval, TimeSpan.Zero);
        return new RealClockMonitor(this, ToClockTime(interval), sample);
    }

    /// <inheritdoc />
    protected override TimeSpan ToClockTime(TimeSpan duration) => duration * _scale;
}
