using Nito.AsyncEx;
using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Lifecycle;

/// <summary>
/// The three schedulers share one lifetime (accepting, shutting down, finished, disposed), so a <see cref="Lane"/> of
/// any of them refuses new work the way <see cref="Lane.Run(Func{Task})"/> documents: an
/// <see cref="InvalidOperationException"/> once the scheduler has finished, or while it shuts down and the caller is
/// not one of its threads; an <see cref="ObjectDisposedException"/> after disposal. A post is never refused: it is
/// rejected to the thread pool and counted.
/// </summary>
public class SchedulerLifetimeTests
{
    public static TheoryData<string, bool> KindsAndDisposals()
    {
        var data = new TheoryData<string, bool>();
        foreach (var kind in Kinds)
        {
            data.Add(kind, false);
            data.Add(kind, true);
        }

        return data;
    }

    public static TheoryData<string> AllKinds() => new(Kinds);

    public static TheoryData<string> KindsWithAGracefulStop() => new(Kinds.Where(kind => kind != Context));

    private const string Context = "PriorityAsyncContext";
    private const string Multi = "PriorityTaskScheduler";
    private const string Pool = "PriorityTaskScheduler, thread-pool workers";
    private const string Hosted = "HostedPriorityScheduler";

    private static readonly string[] Kinds = [Context, Multi, Pool, Hosted];

    [Theory]
    [MemberData(nameof(KindsAndDisposals))]
    public async Task AfterDisposal_RunThrowsObjectDisposedException_AndAPostIsRejectedToThePool(string kind, bool asynchronously)
    {
        using var subject = Subject.Create(kind);
        var lane = subject.Scheduler.GetLane(LanePriority.Processing);

        await subject.DisposeAsync(asynchronously);

        Action run = () => _ = lane.Run(static () => { });
        Action runAsync = () => _ = lane.Run(static () => Task.CompletedTask);
        run.Should().ThrowExactly<ObjectDisposedException>().WithMessage($"*{subject.Scheduler.Name}*has been disposed and accepts no new work*");
        runAsync.Should().ThrowExactly<ObjectDisposedException>();
        Action track = () => lane.TrackWork();
        track.Should().ThrowExactly<ObjectDisposedException>();
        Action check = subject.Scheduler.ThrowIfNotAcceptingNewWork;
        check.Should().ThrowExactly<ObjectDisposedException>();
        await PostIsRejectedToThePool(subject.Scheduler, lane);
    }

    [Theory]
    [MemberData(nameof(KindsWithAGracefulStop))]
    public async Task TrackedWork_AGracefulStopWaitsForIt_UntilItsFirstDispose(string kind)
    {
        using var subject = Subject.Create(kind);
        var lane = subject.Scheduler.GetLane(LanePriority.Processing);
        var first = lane.TrackWork();
        var second = lane.TrackWork();
        first.Dispose();
        first.Dispose(); // ends the count once: the second work still holds the stop
        first.IsEnded.Should().BeTrue();

        subject.Complete();
        var completion = subject.Completion;
        await Task.WhenAny(completion, Task.Delay(200));

        completion.IsCompleted.Should().BeFalse("the second tracked work has not ended");
        second.IsEnded.Should().BeFalse();
        second.Dispose();
        await Bounded.Within(completion, "the stop once the last tracked work ended");
        await subject.DisposeAsync(asynchronously: true);
    }

    [Theory]
    [MemberData(nameof(AllKinds))]
    public async Task AfterTheFinish_RunThrowsInvalidOperationException_ThenAfterDisposalObjectDisposedException(string kind)
    {
        using var subject = Subject.Create(kind);
        var lane = subject.Scheduler.GetLane(LanePriority.Processing);

        await subject.FinishAsync();

        Action run = () => _ = lane.Run(static () => { });
        run.Should().ThrowExactly<InvalidOperationException>().WithMessage($"*{subject.Scheduler.Name}*has finished running and accepts no new work*");
        await PostIsRejectedToThePool(subject.Scheduler, lane);
        await subject.DisposeAsync(asynchronously: true);
        run.Should().ThrowExactly<ObjectDisposedException>().WithMessage("*has been disposed and accepts no new work*");
    }

    [Theory]
    [MemberData(nameof(KindsWithAGracefulStop))]
    public async Task WhileShuttingDown_RunFromOutsideThrowsInvalidOperationException_AndFromInsideIsTaken(string kind)
    {
        using var subject = Subject.Create(kind);
        var lane = subject.Scheduler.GetLane(LanePriority.Processing);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var inFlight = lane.Run(async () =>
        {
            await release.Task;
            await lane.Run(static () => { }); // from the scheduler's own thread: still taken while it shuts down
        });

        subject.Complete();

        Action outside = () => _ = lane.Run(static () => { });
        outside.Should().ThrowExactly<InvalidOperationException>().WithMessage($"*{subject.Scheduler.Name}*is shutting down and accepts new work only from its own threads*");
        release.SetResult();
        await Bounded.Within(inFlight, "the run in flight and the run it started while the scheduler shut down");
        await subject.DisposeAsync(asynchronously: true);
        outside.Should().ThrowExactly<ObjectDisposedException>();
    }

    [Fact]
    public void HostedScheduler_DisposedOnItsHostThread_IsDisposedOnceItHasStopped()
    {
        Action? run = null;
        AsyncContext.Run(async () =>
        {
            var scheduler = new HostedPriorityScheduler(SynchronizationContext.Current!);
            await scheduler.GetLane(LanePriority.Processing).Run(static () => { });

            scheduler.Dispose(); // on the host's thread it only signals: the stop needs this thread
            await scheduler.Completion;

            run = () => _ = scheduler.GetLane(LanePriority.Processing).Run(static () => { });
        });

        run.Should().NotBeNull();
        run.Should().ThrowExactly<ObjectDisposedException>().WithMessage("*has been disposed and accepts no new work*");
    }

    private static async Task PostIsRejectedToThePool(PriorityScheduler scheduler, Lane lane)
    {
        var rejectedBefore = scheduler.RejectedWorkCount;
        var ran = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

        lane.SynchronizationContext.Post(_ => ran.TrySetResult(Thread.CurrentThread.IsThreadPoolThread), null);

        (await Bounded.Within(ran.Task, "the late post")).Should().BeTrue("a post after the stop runs on the thread pool");
        scheduler.RejectedWorkCount.Should().Be(rejectedBefore + 1);
    }

    /// <summary>One scheduler of each kind, with the way it finishes and the way it is disposed.</summary>
    private sealed class Subject : IDisposable
    {
        private readonly FifoThreadContext? _host;

        private Subject(PriorityScheduler scheduler, FifoThreadContext? host = null)
        {
            Scheduler = scheduler;
            _host = host;
        }

        public PriorityScheduler Scheduler { get; }

        public static Subject Create(string kind)
        {
            switch (kind)
            {
                case Context:
                    return new Subject(new PriorityAsyncContext(new PrioritySchedulerOptions { Name = "lifetime-context" }));
                case Multi:
                    return new Subject(new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { Name = "lifetime-multi", WorkerCount = 2 }));
                case Pool:
                    return new Subject(new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { Name = "lifetime-pool", WorkerCount = 2, Mode = PriorityWorkerMode.ThreadPool }));
                default:
                    var host = new FifoThreadContext();
                    return new Subject(new HostedPriorityScheduler(host, new PrioritySchedulerOptions { Name = "lifetime-hosted" }), host);
            }
        }

        /// <summary>Begins the graceful stop of a scheduler that has one.</summary>
        /// <summary>Gets the task of a scheduler with a graceful stop that completes once it has finished.</summary>
        public Task Completion => Scheduler switch
        {
            PriorityTaskScheduler multi => multi.Completion,
            HostedPriorityScheduler hosted => hosted.Completion,
            _ => throw new InvalidOperationException($"{Scheduler} has no graceful stop of its own."),
        };

        public void Complete()
        {
            switch (Scheduler)
            {
                case PriorityTaskScheduler multi:
                    multi.Complete();
                    break;
                case HostedPriorityScheduler hosted:
                    hosted.Complete();
                    break;
                default:
                    throw new InvalidOperationException($"{Scheduler} has no graceful stop of its own.");
            }
        }

        /// <summary>Brings the scheduler to its finish without disposing it: the end of a context's run, a completed stop.</summary>
        public async Task FinishAsync()
        {
            switch (Scheduler)
            {
                case PriorityAsyncContext context:
                    context.Execute(LanePriority.Processing, static () => Task.CompletedTask);
                    break;
                case PriorityTaskScheduler multi:
                    multi.Complete();
                    await Bounded.Within(multi.Completion, "the stop");
                    break;
                case HostedPriorityScheduler hosted:
                    hosted.Complete();
                    await Bounded.Within(hosted.Completion, "the stop");
                    break;
            }
        }

        public async Task DisposeAsync(bool asynchronously)
        {
            if (asynchronously && Scheduler is IAsyncDisposable disposable)
            {
                await disposable.DisposeAsync();
            }
            else
            {
                Scheduler.Dispose();
            }
        }

        public void Dispose()
        {
            Scheduler.Dispose();
            _host?.Dispose();
        }
    }
}
