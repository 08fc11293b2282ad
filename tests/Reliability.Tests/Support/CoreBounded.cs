namespace PriorityAsync.Reliability.Tests.Support;

/// <summary>Every wait of the suite: generous, bounded, and failing with a message instead of hanging.</summary>
internal static class CoreBounded
{
    public static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);

    public static async Task WaitAsync(Task task, string what, TimeSpan? bound = null)
    {
        var limit = bound ?? Generous;
        var finished = await Task.WhenAny(task, Task.Delay(limit));
        if (finished != task)
        {
            throw new TimeoutException($"{what} did not finish within {limit.TotalSeconds:0} s");
        }
    }

    public static void Wait(Task task, string what, TimeSpan? bound = null)
    {
        var limit = bound ?? Generous;
        if (!((IAsyncResult)task).AsyncWaitHandle.WaitOne(limit))
        {
            throw new TimeoutException($"{what} did not finish within {limit.TotalSeconds:0} s");
        }
    }

    public static void Wait(WaitHandle handle, string what, TimeSpan? bound = null)
    {
        var limit = bound ?? Generous;
        if (!handle.WaitOne(limit))
        {
            throw new TimeoutException($"{what} did not happen within {limit.TotalSeconds:0} s");
        }
    }

    /// <summary>Joins a thread the test started, or fails naming it.</summary>
    public static void Join(Thread thread, TimeSpan? bound = null)
    {
        var limit = bound ?? Generous;
        if (!thread.Join(limit))
        {
            throw new TimeoutException($"thread '{thread.Name}' did not end within {limit.TotalSeconds:0} s");
        }
    }
}
