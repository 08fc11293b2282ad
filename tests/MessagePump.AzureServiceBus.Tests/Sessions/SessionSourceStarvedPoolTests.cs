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

        using (StarvedThreadPool.Begin())
        {
            scenario.Start();
            scenario.Join(Bounded.Generous).Should().BeTrue("the session source continues in the caller's lanes; a continuation queued to the blocked pool never runs");
        }

        scenario.Join();
        failure.Should().BeNull();
    }
}
