using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Sessions;

/// <summary>
/// A session source called from a scheduler never waits for the thread pool: with every pool thread blocked, the
/// receive, the late renewal's answer, the settlement and the disposal all go on in the caller's lanes. An await that
/// leaves the lane (<c>ConfigureAwait(false)</c> on a task that completes in a lane) queues the rest of the method to
/// the pool, and on a virtual clock the scheduler jumps ahead meanwhile: the keeper's verdict then comes too late and
/// the message is not handed out, or, with the pool blocked, the receive never returns.
/// </summary>
[Collection(RealTimeCollection.Name)] // blocks the process's thread pool: nothing else may run beside it
public sealed class SessionSourceStarvedPoolTests
{
    [Fact]
    public void The_verdict_scenario_runs_to_the_end_with_every_pool_thread_blocked()
    {
        ThreadPool.GetMaxThreads(out var maxWorkers, out var maxIo);
        ThreadPool.GetMinThreads(out var minWorkers, out var minIo);
        var workers = Environment.ProcessorCount; // the least SetMaxThreads takes
        ThreadPool.SetMinThreads(1, minIo).Should().BeTrue();
        ThreadPool.SetMaxThreads(workers, maxIo).Should().BeTrue();
        var release = new ManualResetEventSlim(); // never disposed: the last blocker may start waiting after the test ends
        var started = 0;
        Exception? failure = null;
        var scenario = new Thread(() =>
        {
            try
            {
                new SessionVerdictTests().A_message_that_comes_while_a_renewal_that_arrived_in_time_is_unanswered_is_handed_out();
            }
#pragma warning disable CA1031 // reported by the test thread below
            catch (Exception ex)
#pragma warning restore CA1031
            {
                failure = ex;
            }
        })
        { IsBackground = true, Name = "starved-pool scenario" };
        try
        {
            // Every worker the pool may run is taken: the test's own thread and workers - 1 blockers, or more blockers
            // when the pool still runs more threads than its new maximum (it retires them only as they go idle).
            for (var i = 0; i < workers; i++)
            {
                ThreadPool.UnsafeQueueUserWorkItem(
                    _ =>
                    {
                        Interlocked.Increment(ref started);
                        release.Wait();
                    },
                    null);
            }

            SpinWait.SpinUntil(() => Volatile.Read(ref started) >= workers - 1, TimeSpan.FromSeconds(10)); // the last blocker may wait for a free thread, as every later item does

            scenario.Start();
            var ended = scenario.Join(TimeSpan.FromMinutes(2)); // a guard against a hang, not a time budget: the scenario takes milliseconds
            ended.Should().BeTrue("the session source continues in the caller's lanes; a continuation queued to the blocked pool never runs");
        }
        finally
        {
            release.Set();
            ThreadPool.SetMaxThreads(maxWorkers, maxIo);
            ThreadPool.SetMinThreads(minWorkers, minIo);
        }

        scenario.Join();
        failure.Should().BeNull();
    }
}
