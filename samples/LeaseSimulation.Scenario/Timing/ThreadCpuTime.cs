using System.Runtime.InteropServices;

namespace LeaseSimulation.Timing;

/// <summary>
/// The calling thread's own CPU time, from <c>clock_gettime(CLOCK_THREAD_CPUTIME_ID)</c> in libc. Supported on Linux
/// (checked once, on first use); macOS has the same call with another clock id (16, untested here); elsewhere (Windows)
/// <see cref="IsSupported"/> is <see langword="false"/> and the <c>work</c> CPU mode falls back to <c>spin</c>.
/// </summary>
public static partial class ThreadCpuTime
{
    private const int LinuxThreadCpuTimeId = 3;
    private const int MacThreadCpuTimeId = 16;
    private static readonly Lazy<bool> Supported = new(Probe);

    /// <summary>Gets whether the thread CPU clock can be read on this machine.</summary>
    public static bool IsSupported => Supported.Value;

    /// <summary>Reads the calling thread's CPU time.</summary>
    /// <returns>The CPU time the calling thread has used since it started.</returns>
    /// <exception cref="PlatformNotSupportedException">The clock is not available (see <see cref="IsSupported"/>).</exception>
    public static TimeSpan Now()
    {
        if (!IsSupported || !TryRead(out var time))
        {
            throw new PlatformNotSupportedException("The thread CPU clock (clock_gettime(CLOCK_THREAD_CPUTIME_ID)) is not available on this platform.");
        }

        return time;
    }

    private static bool Probe()
    {
        try
        {
            return (OperatingSystem.IsLinux() || OperatingSystem.IsMacOS()) && TryRead(out _);
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }

    private static bool TryRead(out TimeSpan time)
    {
        var clockId = OperatingSystem.IsMacOS() ? MacThreadCpuTimeId : LinuxThreadCpuTimeId;
        if (ClockGetTime(clockId, out var spec) != 0)
        {
            time = default;
            return false;
        }

        time = TimeSpan.FromTicks((spec.Seconds * TimeSpan.TicksPerSecond) + (spec.Nanoseconds / 100));
        return true;
    }

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clockId, out TimeSpec spec);

    [StructLayout(LayoutKind.Sequential)]
    private struct TimeSpec
    {
        public long Seconds;
        public long Nanoseconds;
    }
}
