using System.Runtime.InteropServices;

namespace PriorityAsync;

/// <summary>
/// Gives a worker thread a scheduling priority. <see cref="Thread.Priority"/> is honoured on Windows, where priorities
/// are strict: a thread of higher priority that wakes preempts a lower one at once. On Linux .NET ignores it, so it is
/// applied to the thread itself (Linux schedules threads, each with its own policy and nice value):
/// <see cref="ThreadPriority.BelowNormal"/> adds 5 to the nice value (a smaller share of a busy core), and
/// <see cref="ThreadPriority.Lowest"/> moves the thread to <c>SCHED_IDLE</c>, Linux's counterpart of a strict lower
/// priority: any ordinary thread that wakes preempts it at once, and it runs only on a core no ordinary thread wants.
/// A nice value's share alone is not enough for that: under the kernel's EEVDF scheduler a woken thread may wait for
/// a spinning thread of nice 10 to finish its time slice (measured: p99 3.7 ms and worse, docs/benchmarks.md).
/// Lowering a priority needs no privilege; raising one does, so priorities above normal are left to Windows. Threads
/// that .NET starts from such a worker do not inherit it (the runtime sets their scheduling attributes explicitly).
/// </summary>
internal static partial class WorkerThreadPriority
{
    /// <summary>Linux's <c>SCHED_IDLE</c>: runs only when no ordinary thread wants the core.</summary>
    public const int IdlePolicy = 5;

    private const int PrioProcess = 0;
    private const int MaxNice = 19;

    /// <summary>Applies <paramref name="priority"/> to the calling thread; best effort (a refused call changes nothing).</summary>
    public static void ApplyToCurrentThread(ThreadPriority priority)
    {
        Thread.CurrentThread.Priority = priority;
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        var thread = GetThreadId();
        var staticPriority = 0; // glibc's struct sched_param is one int, which must be 0 for SCHED_IDLE
        if (priority == ThreadPriority.Lowest && SetScheduler(thread, IdlePolicy, ref staticPriority) == 0)
        {
            return;
        }

        // A smaller share instead: BelowNormal, or Lowest where the kernel or a sandbox refuses SCHED_IDLE.
        var increment = NiceIncrement(priority);
        if (increment > 0)
        {
            _ = SetPriority(PrioProcess, thread, Math.Min(MaxNice, GetPriority(PrioProcess, thread) + increment));
        }
    }

    /// <summary>How much <paramref name="priority"/> adds to a Linux nice value (for <see cref="ThreadPriority.Lowest"/>, only where <c>SCHED_IDLE</c> is refused).</summary>
    private static int NiceIncrement(ThreadPriority priority) => priority switch
    {
        ThreadPriority.BelowNormal => 5,
        ThreadPriority.Lowest => 10,
        _ => 0,
    };

    [LibraryImport("libc", EntryPoint = "gettid")]
    private static partial int GetThreadId();

    [LibraryImport("libc", EntryPoint = "getpriority")]
    private static partial int GetPriority(int which, int who);

    [LibraryImport("libc", EntryPoint = "setpriority")]
    private static partial int SetPriority(int which, int who, int priority);

    [LibraryImport("libc", EntryPoint = "sched_setscheduler")]
    private static partial int SetScheduler(int thread, int policy, ref int parameters);
}
