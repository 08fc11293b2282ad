using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Scheduling;

public class PriorityAsyncContextErrorTests
{
    [Fact]
    public void EntryPointException_IsRethrown()
    {
        var act = () => Bounded.Run(async () =>
        {
            await Task.Yield();
            throw new InvalidTimeZoneException("entry failed");
        });

        act.Should().Throw<InvalidTimeZoneException>().WithMessage("entry failed");
    }

    [Fact]
    public void AsyncVoidException_EndsTheRunAndIsRethrown()
    {
        var act = () => Bounded.Run(async () =>
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
        var act = () => Bounded.Run(async () =>
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
        ran.Wait(Bounded.Generous).Should().BeTrue("a post after the run is rejected to the thread pool, not dropped");
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
#pragma warning disable PA0004 // the test sends to the context from another thread
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
#pragma warning restore PA0004
        });

        sentOn.Should().Be(contextThread);
        sendFailure.Should().NotBeNull();
    }

    [Fact]
    public void ExceptionsAfterTheFirst_AreReportedThroughUnhandledException_WhileTheQueueDrains()
    {
        using var context = new PriorityAsyncContext();
        var reported = new List<(string Lane, string Message)>();
        context.UnhandledException += (_, e) => reported.Add((e.Lane.Name, e.Exception.Message));

        var execute = () => context.Execute(() =>
        {
            context.GetLane(LanePriority.Processing).SynchronizationContext.Post(_ => throw new FormatException("first"), null);
            context.GetLane(LanePriority.Receive).SynchronizationContext.Post(_ => throw new FormatException("second"), null);
            context.GetLane(LanePriority.Receive).SynchronizationContext.Post(_ => throw new FormatException("third"), null);
            return Task.CompletedTask;
        });

        execute.Should().Throw<FormatException>().WithMessage("first");
        reported.Should().Equal(("Receive", "second"), ("Receive", "third"));
    }

    [Fact]
    public void Execute_WithoutAnEntryPoint_ThrowsNamingIt_AndLeavesTheContextUnused()
    {
        using var context = new PriorityAsyncContext();

        context.Invoking(c => c.Execute(null!)).Should().Throw<ArgumentNullException>().WithParameterName("entry");
        context.Invoking(c => c.Execute<int>(null!)).Should().Throw<ArgumentNullException>().WithParameterName("entry");
        context.Invoking(c => c.Execute(LanePriority.FromRank(3), () => Task.FromResult(1))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("lane");

        context.Execute(LanePriority.Receive, () => Task.FromResult(PriorityScheduler.CurrentLane!.Name)).Should().Be("Receive");
    }

    [Fact]
    public void Run_WithOptions_UsesThem_AndReturnsTheResult()
    {
        var clock = new VirtualTimeProvider();

        var (name, isVirtual, elapsed) = Bounded.Run(
            async () =>
            {
                var context = (PriorityAsyncContext)PriorityScheduler.Current!;
                await Task.Delay(TimeSpan.FromMinutes(5), context.TimeProvider);
                return (context.Name, context.IsVirtualTime, clock.Elapsed);
            },
            new PrioritySchedulerOptions { Name = "with-options", TimeProvider = clock });

        name.Should().Be("with-options");
        isVirtual.Should().BeTrue();
        elapsed.Should().Be(TimeSpan.FromMinutes(5));
        using var realTime = new PriorityAsyncContext();
        realTime.IsVirtualTime.Should().BeFalse();
    }

    [Fact]
    public async Task ContextThread_DisposedFromItsOwnThread_DoesNotDeadlock_AndStops()
    {
        var owner = new PriorityAsyncContextThread();

        await Bounded.Within(owner.RunAsync(LanePriority.Processing, () =>
        {
            owner.Dispose();
            return Task.CompletedTask;
        }), "a run that disposes its own context thread");

        await Bounded.Within(owner.Completion, "the context thread's stop");
        Action run = () => _ = owner.RunAsync(LanePriority.Lease, () => Task.CompletedTask);
        run.Should().Throw<ObjectDisposedException>();
    }
}
