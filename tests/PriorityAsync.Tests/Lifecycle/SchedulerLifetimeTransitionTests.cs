namespace PriorityAsync.Tests.Lifecycle;

/// <summary>
/// The transitions of <see cref="SchedulerLifetime"/> on their own: each happens once, the states only move forward,
/// and a scheduler is disposed exactly when it has finished and its disposal was asked for, in either order.
/// </summary>
public sealed class SchedulerLifetimeTransitionTests : IDisposable
{
    private readonly PriorityAsyncContext _owner = new(new PrioritySchedulerOptions { Name = "owner" });
    private readonly SchedulerLifetime _lifetime;

    public SchedulerLifetimeTransitionTests()
    {
        _lifetime = new SchedulerLifetime(_owner, new object());
    }

    public void Dispose() => _owner.Dispose();

    [Fact]
    public void AGracefulStop_MovesThroughEveryState_EachTransitionOnce()
    {
        _lifetime.TryBeginDraining().Should().BeTrue();
        _lifetime.TryBeginDraining().Should().BeFalse();
        _lifetime.State.Should().Be(AcceptanceState.Draining);
        _lifetime.AcceptsQueuedWorkFromCallingThread.Should().BeTrue("continuations of work in flight are still taken");

        _lifetime.TryClose().Should().BeTrue();
        _lifetime.TryClose().Should().BeFalse();
        _lifetime.TryBeginDraining().Should().BeFalse();
        _lifetime.State.Should().Be(AcceptanceState.Closing);
        _lifetime.IsClosing.Should().BeTrue();
        _lifetime.AcceptsQueuedWorkFromCallingThread.Should().BeFalse();

        _lifetime.TryFinish().Should().BeTrue();
        _lifetime.TryFinish().Should().BeFalse();
        _lifetime.TryClose().Should().BeFalse();
        _lifetime.State.Should().Be(AcceptanceState.Closed);
        _lifetime.HasFinished.Should().BeTrue();

        _lifetime.RequestDispose().Should().BeTrue("a finished scheduler is disposed at once");
        _lifetime.RequestDispose().Should().BeFalse();
        _lifetime.State.Should().Be(AcceptanceState.Disposed);
    }

    [Fact]
    public void ADisposalAskedForBeforeTheFinish_TakesEffectAtTheFinish()
    {
        _lifetime.RequestDispose().Should().BeFalse("nothing has finished yet");
        _lifetime.State.Should().Be(AcceptanceState.Open);
        _lifetime.ThrowIfNotAcceptingNewWork();

        _lifetime.TryFinish().Should().BeTrue();

        _lifetime.State.Should().Be(AcceptanceState.Disposed);
        var start = () => _lifetime.ThrowIfNotAcceptingNewWork();
        start.Should().ThrowExactly<ObjectDisposedException>().WithMessage("*owner*has been disposed and accepts no new work*");
    }

    [Fact]
    public void NewWork_IsRefusedFromOutsideWhileShuttingDown_AndByEveryoneOnceFinished()
    {
        var start = () => _lifetime.ThrowIfNotAcceptingNewWork();
        _lifetime.TryBeginDraining();
        start.Should().ThrowExactly<InvalidOperationException>().WithMessage("*owner*is shutting down*");

        _lifetime.TryClose(takesOwnWork: true);
        start.Should().ThrowExactly<InvalidOperationException>().WithMessage("*owner*is shutting down*", "the test's thread is not the owner's");
        _lifetime.AcceptsQueuedWorkFromCallingThread.Should().BeFalse("only the owner's own threads may still queue work");

        _lifetime.TryFinish();
        start.Should().ThrowExactly<InvalidOperationException>().WithMessage("*owner*has finished running*");
    }

    [Fact]
    public void OwnWorkWhileClosing_IsTakenOnlyOnTheOwnersThread_UntilStopped()
    {
        var seen = new List<bool>();
        var lifetime = new SchedulerLifetime(_owner, new object());
        _owner.Execute(LanePriority.Processing, () =>
        {
            lifetime.TryClose(takesOwnWork: true);
            seen.Add(lifetime.AcceptsQueuedWorkFromCallingThread);
            lifetime.ThrowIfNotAcceptingNewWork();
            lifetime.StopTakingOwnWork();
            seen.Add(lifetime.AcceptsQueuedWorkFromCallingThread);
            return Task.CompletedTask;
        });

        seen.Should().Equal(true, false);
    }
}
