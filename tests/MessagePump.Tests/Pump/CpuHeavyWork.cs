namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// The seed article's message work: <see cref="Steps"/> iterations of a CPU-bound step (the thread is held while the
/// virtual clock moves, like <c>Thread.Sleep</c>) followed by an I/O-bound wait on the scheduler's clock.
/// </summary>
internal sealed class CpuHeavyWork(VirtualTimeProvider clock, TimeSpan cpu, TimeSpan io, int steps = 20)
{
    public int Steps { get; } = steps;

    public async Task RunAsync(TimeProvider time, CancellationToken cancellationToken)
    {
        for (var i = 0; i < Steps; i++)
        {
            clock.Advance(cpu);
            await Task.Delay(io, time, cancellationToken);
        }
    }
}
