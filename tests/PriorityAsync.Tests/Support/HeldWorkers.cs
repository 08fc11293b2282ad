namespace PriorityAsync.Tests.Support;

/// <summary>
/// Holds <c>count</c> workers of a scheduler with blocking items in one lane until released, so a test can assert what
/// runs while they are still held (no timing involved).
/// </summary>
internal sealed class HeldWorkers : IAsyncDisposable
{
    private readonly ManualResetEventSlim _release = new();
    private readonly Task[] _blockers;

    private HeldWorkers(Lane lane, int count)
    {
        using var held = new CountdownEvent(count);
        _blockers = [.. Enumerable.Range(0, count).Select(_ => lane.Run(() =>
        {
            held.Signal();
            _release.Wait(Bounded.Generous);
        }))];
        held.Wait(Bounded.Generous).Should().BeTrue($"{count} worker(s) start the blocking items of {lane.Name}");
    }

    /// <summary>Gets whether the workers are still held.</summary>
    public bool StillHeld => !_release.IsSet;

    /// <summary>Blocks <paramref name="count"/> workers with items of <paramref name="lane"/>; returns once all are held.</summary>
    public static HeldWorkers Hold(Lane lane, int count = 1) => new(lane, count);

    /// <summary>Releases the workers and waits for their items to end.</summary>
    public async ValueTask DisposeAsync()
    {
        _release.Set();
        await Task.WhenAll(_blockers).WaitAsync(Bounded.Generous);
        _release.Dispose();
    }
}
