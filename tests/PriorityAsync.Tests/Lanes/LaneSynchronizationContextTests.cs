using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Lanes;

/// <summary>The lane as a synchronization context and a task scheduler, as the runtime and libraries call it.</summary>
public class LaneSynchronizationContextTests
{
    [Fact]
    public void Send_FromTheSchedulersOwnThread_RunsInline_WithoutDeadlocking()
    {
        var steps = new List<string>();
        Bounded.OnOwnThread(
            () => PriorityAsyncContext.Run(() =>
            {
                var receive = PriorityScheduler.Current!.GetLane(LanePriority.Receive).SynchronizationContext;
                steps.Add("before send");
                receive.Send(_ => steps.Add("sent"), null);
                steps.Add("after send");
                return Task.CompletedTask;
            }),
            "a context whose entry point sends to a lane");

        steps.Should().Equal("before send", "sent", "after send");
    }

    [Fact]
    public void CreateCopy_IsTheLaneItself_SoCopiesPostIntoTheSameLane()
    {
        using var context = new PriorityAsyncContext();
        var lane = context.GetLane(LanePriority.Processing);

        lane.SynchronizationContext.CreateCopy().Should().BeSameAs(lane.SynchronizationContext);
    }

    [Fact]
    public void NullCallbacksAndWork_AreRejected_NamingTheArgument()
    {
        using var context = new PriorityAsyncContext();
        var lane = context.GetLane(LanePriority.Processing);

        lane.SynchronizationContext.Invoking(c => c.Post(null!, null)).Should().Throw<ArgumentNullException>().WithParameterName("d");
        lane.SynchronizationContext.Invoking(c => c.Send(null!, null)).Should().Throw<ArgumentNullException>().WithParameterName("d");
        Action runAction = () => _ = lane.Run((Action)null!);
        Action runFunction = () => _ = lane.Run((Func<Task>)null!);
        Action runTypedFunction = () => _ = lane.Run((Func<Task<int>>)null!);
        runAction.Should().Throw<ArgumentNullException>().WithParameterName("action");
        runFunction.Should().Throw<ArgumentNullException>().WithParameterName("function");
        runTypedFunction.Should().Throw<ArgumentNullException>().WithParameterName("function");
        lane.Invoking(l => l.SwitchTo().GetAwaiter().OnCompleted(null!)).Should().Throw<ArgumentNullException>().WithParameterName("continuation");
        lane.Invoking(l => l.SwitchTo().GetAwaiter().UnsafeOnCompleted(null!)).Should().Throw<ArgumentNullException>().WithParameterName("continuation");
        lane.QueueLength.Should().Be(0, "nothing was queued by the rejected calls");
    }

    [Fact]
    public void SwitchTo_FlowsTheExecutionContext_IntoTheLane()
    {
        var local = new AsyncLocal<string>();
        string? seen = null;

        Bounded.Run(async () =>
        {
            local.Value = "flowed";
            await PriorityScheduler.Current!.GetLane(LanePriority.Receive).SwitchTo();
            seen = local.Value;
        });

        seen.Should().Be("flowed");
    }

    [Fact]
    public void OnCompleted_CalledDirectly_FlowsTheCallersExecutionContext()
    {
        var local = new AsyncLocal<string>();
        var seen = new List<string?>();

        Bounded.Run(async () =>
        {
            var lane = PriorityScheduler.Current!.GetLane(LanePriority.Processing);
            var done = new TaskCompletionSource();
            local.Value = "captured";
            lane.SwitchTo().GetAwaiter().OnCompleted(() =>
            {
                seen.Add(local.Value);
                done.SetResult();
            });
            local.Value = "changed later";
            await done.Task;
        });

        seen.Should().Equal("captured");
    }

    [Fact]
    public void OnCompleted_WithFlowSuppressed_StillRunsTheContinuationInTheLane()
    {
        var seen = new List<string?>();

        Bounded.Run(async () =>
        {
            var lane = PriorityScheduler.Current!.GetLane(LanePriority.Receive);
            var done = new TaskCompletionSource();
            using (ExecutionContext.SuppressFlow())
            {
                lane.SwitchTo().GetAwaiter().OnCompleted(() =>
                {
                    seen.Add(PriorityScheduler.CurrentLane?.Name);
                    done.SetResult();
                });
            }

            await done.Task;
        });

        seen.Should().Equal("Receive");
    }

    [Fact]
    public void YieldIfNeeded_WhenAYieldIsDue_ContinuesBehindTheItemsAlreadyWaitingInItsLane()
    {
        var order = new List<string>();

        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            await PriorityScheduler.YieldTo(LanePriority.Processing);
            scheduler.GetLane(LanePriority.Processing).SynchronizationContext.Post(_ => order.Add("waiting processing item"), null);
            scheduler.GetLane(LanePriority.Lease).SynchronizationContext.Post(_ => order.Add("lease item"), null);
            var awaiter = PriorityScheduler.YieldIfNeeded().GetAwaiter();
            order.Add($"completed: {awaiter.IsCompleted}");
            await PriorityScheduler.YieldIfNeeded();
            order.Add($"resumed in {PriorityScheduler.CurrentLane!.Name}");
        });

        order.Should().Equal("completed: False", "lease item", "waiting processing item", "resumed in Processing");
    }

    [Fact]
    public void YieldIfNeeded_OnCompletedCalledDirectly_QueuesTheContinuationAtTheBackOfTheSameLane()
    {
        var order = new List<string>();

        Bounded.Run(async () =>
        {
            await PriorityScheduler.YieldTo(LanePriority.Processing);
            var lane = PriorityScheduler.CurrentLane!;
            var done = new TaskCompletionSource();
            lane.SynchronizationContext.Post(_ => order.Add("already waiting"), null);
            var awaiter = PriorityScheduler.YieldIfNeeded().GetAwaiter();
            awaiter.OnCompleted(() => order.Add($"safe continuation in {PriorityScheduler.CurrentLane!.Name}"));
            awaiter.UnsafeOnCompleted(() =>
            {
                order.Add($"unsafe continuation in {PriorityScheduler.CurrentLane!.Name}");
                done.SetResult();
            });
            awaiter.GetResult();
            await done.Task;
        });

        order.Should().Equal("already waiting", "safe continuation in Processing", "unsafe continuation in Processing");
    }
}
