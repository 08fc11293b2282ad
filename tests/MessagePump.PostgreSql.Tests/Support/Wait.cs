namespace PriorityAsync.MessagePump.PostgreSql.Tests.Support;

/// <summary>Bounded waits that fail with a message.</summary>
internal static class Wait
{
    /// <summary>
    /// The bound of a wait for something that must happen: far beyond what it needs on a loaded machine, so it only
    /// turns a hang into a failure.
    /// </summary>
    public static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);

    public static async Task UntilAsync(Func<Task<bool>> condition, TimeSpan limit, string what, TimeSpan? step = null)
    {
        var deadline = DateTime.UtcNow + limit;
        while (!await condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Timed out after {limit.TotalSeconds:0.#} s waiting for {what}.");
            }

            await Task.Delay(step ?? TimeSpan.FromMilliseconds(100));
        }
    }

    /// <summary>Holds the thread for <paramref name="duration"/> of wall-clock time, like CPU-bound work.</summary>
    public static void Spin(TimeSpan duration)
    {
        var until = System.Diagnostics.Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * System.Diagnostics.Stopwatch.Frequency);
        while (System.Diagnostics.Stopwatch.GetTimestamp() < until)
        {
            Thread.SpinWait(100);
        }
    }
}
