namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>Runs a scenario on one thread on virtual time, and waits on a clock.</summary>
internal static class VirtualRun
{
    public static void Run(VirtualTimeProvider clock, Func<PriorityScheduler, Task> body, IList<LaneOptions>? lanes = null)
    {
        var options = new PrioritySchedulerOptions { TimeProvider = clock };
        if (lanes is not null)
        {
            options.Lanes = lanes;
        }

        PriorityAsyncContext.Run(() => body(PriorityScheduler.Current!), options);
    }

    public static async Task WaitUntilAsync(Func<bool> condition, TimeProvider time, TimeSpan limit, TimeSpan? step = null)
    {
        var deadline = time.GetUtcNow() + limit;
        while (!condition())
        {
            if (time.GetUtcNow() > deadline)
            {
                throw new TimeoutException($"The condition did not hold within {limit}.");
            }

            await Task.Delay(step ?? TimeSpan.FromSeconds(1), time);
        }
    }
}
