using System.Runtime.InteropServices;

namespace PriorityAsync;

/// <summary>
/// Gives a worker thread a scheduling priority. <see cref="Thread.Priority"/> is honoured on Windows; on Linux .NET
/// ignores it, so a lower priority is applied as a higher nice value of the thread (Linux schedules threads, and each
/// has its own nice value): <see cref="ThreadPriority.BelowNormal"/> adds 5, <see cref="ThreadPriority.Lowest"/> 10, up to
/// 19. Raising a nice value needs no privilege; lowering one does, so priorities above normal are left to Windows.
/// </summary>
internal static partial class WorkerThreadPriority
{
    private const int PrioProcess = 0;
    private const int MaxNice = 19;

    /// <summary>Applies <paramref name="priority"/> to the calling thread; best effort (a refused call changes nothing).</summary>
    public static void ApplyToCurrentThread(ThreadPriority priority)
    {
        Thread.CurrentThread.Priority = priority;
        var increment = NiceIncrement(priority);
        if (increment > 0 && OperatingSystem.IsLinux())
        {
            var thread = GetThreadId();
            _ = SetPriority(PrioProcess, thread, Math.Min(MaxNice, GetPriority(PrioProcess, thread) + increment));
        }
    }

    /// <summary>Gets the calling thread's nice value on Linux; 0 elsewhere.</summary>
    public static int CurrentNice() => OperatingSystem.IsLinux() ? GetPriority(PrioProcess, GetThreadId()) : 0;

    /// <summary>How much <paramref name="priority"/> adds to a Linux nice value.</summary>
    public static int NiceIncrement(ThreadPriority priority) => priority switch
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
}
