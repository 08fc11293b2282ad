namespace PriorityAsync.Tests.Scheduling;

public class PriorityAsyncContextErrorTests
{
    [Fact]
    public void EntryPointException_IsRethrown()
    {
        var act = () => PriorityAsyncContext.Run(async () =>
        {
            await Task.Yield();
            throw new InvalidTimeZoneException("entry failed");
        });

        act.Should().Throw<InvalidTimeZoneException>().WithMessage("entry failed");
    }

    [Fact]
    public void AsyncVoidException_EndsTheRunAndIsRethrown()
    {
        var act = () => PriorityAsyncContext.Run(async () =>
        {
            Explode();
            await Task.Delay(Timeout.Infinite, CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(30));
        });

        act.Should().Throw<DivideByZeroException>().WithMessage("async void failed");

        static async void Explode()
        {
            await Task.Yield();
            throw new DivideByZeroException("async void failed");
        }
    }

    [Fact]
    public void PostedCallbackException_IsRethrown()
    {
        var act = () => PriorityAsyncContext.Run(async () =>
        {
            SynchronizationContext.Current!.Post(_ => throw new FormatException("posted failed"), null);
            await PriorityScheduler.YieldTo(LanePriority.Receive);
        });

        act.Should().Throw<FormatException>().WithMessage("posted failed");
    }

    [Fact]
    public void AContextRunsOneEntryPoint()
    {
        using var context = new PriorityAsyncContext();
        context.Execute(() => Task.CompletedTask);

        var again = () => context.Execute(() => Task.CompletedTask);

        again.Should().Throw<InvalidOperationException>().WithMessage("*already run an entry point*");
    }

    [Fact]
    public void PostingAfterTheRun_ThrowsNamingTheContext()
    {
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = "ui-loop" });
        SynchronizationContext? captured = null;
        context.Execute(() =>
        {
            captured = SynchronizationContext.Current;
            return Task.CompletedTask;
        });

        using var ran = new ManualResetEventSlim();
        var post = () => captured!.Post(_ => ran.Set(), null);

        post.Should().NotThrow("Post is how the runtime delivers continuations: it never throws");
        ran.Wait(TimeSpan.FromSeconds(30)).Should().BeTrue("a post after the run is rejected to the thread pool, not dropped");
        context.RejectedWorkCount.Should().Be(1);
        Action run = () => _ = context.GetLane(LanePriority.Lease).Run(() => { });
        run.Should().Throw<InvalidOperationException>().WithMessage("*ui-loop*finished running*");
    }

    [Fact]
    public void Disposed_RejectsWorkWithObjectDisposedException()
    {
        var context = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = "gone" });
        context.Dispose();

        var execute = () => context.Execute(() => Task.CompletedTask);
        Action run = () => _ = context.GetLane(LanePriority.Lease).Run(() => Task.CompletedTask);
        var post = () => context.GetLane(LanePriority.Lease).SynchronizationContext.Post(_ => { }, null);

        execute.Should().Throw<ObjectDisposedException>().WithMessage("*gone*");
        run.Should().Throw<ObjectDisposedException>().WithMessage("*gone*");
        post.Should().NotThrow();
        context.RejectedWorkCount.Should().Be(1);
    }

    [Fact]
    public void DisposeFromInside_DoesNotDeadlock_AndTakesEffectWhenTheRunEnds()
    {
        using var context = new PriorityAsyncContext();
        var ranAfterDispose = false;

        context.Execute(async () =>
        {
            context.Dispose();
            await Task.Yield();
            ranAfterDispose = true;
        });

        ranAfterDispose.Should().BeTrue();
        Action run = () => _ = context.GetLane(LanePriority.Lease).Run(() => { });
        run.Should().Throw<ObjectDisposedException>();
    }

    [Fact]
    public void SendFromAnotherThread_RunsOnTheContextThread_AndPropagatesExceptions()
    {
        var contextThread = Environment.CurrentManagedThreadId;
        var sentOn = 0;
        Exception? sendFailure = null;

        PriorityAsyncContext.Run(async () =>
        {
            var lease = SynchronizationContext.Current!;
            await Task.Run(() =>
            {
                lease.Send(_ => sentOn = Environment.CurrentManagedThreadId, null);
                try
                {
                    lease.Send(_ => throw new InvalidProgramException("send failed"), null);
                }
                catch (InvalidProgramException ex)
                {
                    sendFailure = ex;
                }
            });
        });

        sentOn.Should().Be(contextThread);
        sendFailure.Should().NotBeNull();
    }
}
