using System.Globalization;

namespace PriorityAsync.Tests.Support;

/// <summary>
/// The threads of this process as Linux sees them (/proc/self/task): the kernel knows a thread by the first 15
/// characters of its name, and counts its CPU time in clock ticks (1/100 s). Linux only.
/// </summary>
internal static class OsThreads
{
    /// <summary>
    /// User plus system CPU time, in clock ticks, of each thread named <paramref name="name"/> or whose name starts
    /// with <paramref name="name"/> and a space; keyed by kernel name and thread id.
    /// </summary>
    public static Dictionary<string, long> CpuTicks(string name)
    {
        var ticks = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var task in Directory.GetDirectories("/proc/self/task"))
        {
            try
            {
                var comm = File.ReadAllText(Path.Combine(task, "comm")).TrimEnd('\n');
                if (comm != name && !comm.StartsWith(name + " ", StringComparison.Ordinal))
                {
                    continue;
                }

                var stat = File.ReadAllText(Path.Combine(task, "stat"));
                var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' '); // after "pid (comm) ": state is field 3
                ticks[$"{comm} ({Path.GetFileName(task)})"] = long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture);
            }
            catch (IOException)
            {
                // The thread exited meanwhile.
            }
        }

        return ticks;
    }

    /// <summary>Waits (bounded) until no thread named <paramref name="name"/> or "<paramref name="name"/> ..." is left.</summary>
    public static async Task GoneAsync(string name, string what)
    {
        var deadline = DateTime.UtcNow + Bounded.Generous;
        while (CpuTicks(name).Count > 0)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"{what}: threads {string.Join(", ", CpuTicks(name).Keys)} still run after {Bounded.Generous.TotalSeconds:0} s");
            }

            await Task.Delay(5);
        }
    }
}
