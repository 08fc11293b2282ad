using PriorityAsync.Reliability.Tests.Support;

namespace PriorityAsync.Reliability.Tests.Core;

/// <summary>
/// A stop requested while threads keep posting must still end within a bound (ShutdownTimeout plus the items queued at
/// that moment). Found by scenario 2: with posters that never pause, the stop of a PriorityAsyncContextThread
/// with the default ShutdownTimeout did not complete within 95 s.
/// </summary>
public class SustainedPostingTests
{
    [Theory]
    [InlineData(CoreSchedulerUnderTest.ContextThread)]
    [InlineData(CoreSchedulerUnderTest.Dedicated1)]
    [InlineData(CoreSchedulerUnderTest.Pool3)]
    public void Stop_WhilePostersNeverPause_CompletesWithinTheShutdownTimeoutBound(string kind)
    {
        using var target = CoreSchedulerUnderTest.Create(kind, TimeSpan.FromSeconds(1));
        var scheduler = target.Scheduler;
        var running = 1;
        var posters = Enumerable.Range(0, 4).Select(p => new Thread(() =>
        {
            while (Volatile.Read(ref running) == 1)
            {
                scheduler.Lanes[p % scheduler.Lanes.Count].SynchronizationContext.Post(static _ => { }, null);
            }
        })
        { IsBackground = true, Name = $"poster {p}" }).ToArray();
        foreach (var poster in posters)
        {
            poster.Start();
        }

        Thread.Sleep(50);
        target.Stop(dispose: false);
        try
        {
            var stopped = ((IAsyncResult)target.Completion).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(10));
            stopped.Should().BeTrue("{0} stops within ShutdownTimeout (1 s) plus a generous margin although posting goes on", kind);
        }
        finally
        {
            Volatile.Write(ref running, 0);
            foreach (var poster in posters)
            {
                CoreBounded.Join(poster);
            }
        }
    }
}
