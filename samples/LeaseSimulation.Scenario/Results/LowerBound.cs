using LeaseSimulation.Consumers;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Results;

/// <summary>
/// The least scenario time in which a run can complete every message, from its settings and its own jitter draws
/// (the same seeded draws the consumer makes, so the bound holds for the run itself, not just on average). The run
/// cannot end before the largest of three forced paths; docs/simulation.md explains each.
/// </summary>
/// <param name="CpuWork">
/// (a) The first receive, then all CPU work (messages × loops × CPU) spread over at most
/// <c>cpuParallelism</c> threads, then the shortest last IO that can follow the last CPU operation.
/// </param>
/// <param name="ReceiveChain">
/// (b) Receiving is serial: message k is taken after the first k receives; then it still needs its own path
/// (loops × CPU plus its IO draws). The largest over k.
/// </param>
/// <param name="MessagePath">
/// (c) One message's own path after the first receive: the longest loops × CPU plus IO draws. Never above (b); listed
/// because it is the binding part of (b) when receives are short.
/// </param>
public sealed record LowerBound(TimeSpan CpuWork, TimeSpan ReceiveChain, TimeSpan MessagePath)
{
    /// <summary>Gets the bound: the largest of the three paths.</summary>
    public TimeSpan Value => Max(CpuWork, Max(ReceiveChain, MessagePath));

    /// <summary>Gets which path binds: <c>cpu</c>, <c>receive</c> or <c>path</c>.</summary>
    public string Binding => Value == CpuWork ? "cpu" : Value == ReceiveChain ? "receive" : "path";

    /// <summary>Computes the bound of a run with <paramref name="settings"/>.</summary>
    /// <param name="settings">The run's settings (messages, loops, times, jitter and seed).</param>
    /// <param name="cpuParallelism">How many CPU operations can progress at once: 1 on one thread.</param>
    /// <returns>The bound.</returns>
    public static LowerBound Compute(SimulationSettings settings, int cpuParallelism)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentOutOfRangeException.ThrowIfLessThan(cpuParallelism, 1);
        var receives = ScenarioRandom.ForReceive(settings.Seed);
        var received = TimeSpan.Zero;
        var firstReceive = TimeSpan.Zero;
        var receiveChain = TimeSpan.Zero;
        var longestPath = TimeSpan.Zero;
        var shortestLastIo = TimeSpan.MaxValue;
        for (var id = 1; id <= settings.Messages; id++)
        {
            received += ScenarioRandom.Jitter(settings.ReceiveTime, settings.IoJitter, receives);
            if (id == 1)
            {
                firstReceive = received;
            }

            var io = ScenarioRandom.ForMessage(settings.Seed, id);
            var path = TimeSpan.Zero;
            var lastIo = TimeSpan.Zero;
            for (var loop = 0; loop < settings.Loops; loop++)
            {
                lastIo = ScenarioRandom.Jitter(settings.IoTime, settings.IoJitter, io);
                path += settings.CpuTime + lastIo;
            }

            receiveChain = Max(receiveChain, received + path);
            longestPath = Max(longestPath, path);
            shortestLastIo = lastIo < shortestLastIo ? lastIo : shortestLastIo;
        }

        var parallelism = Math.Min(cpuParallelism, settings.Messages);
        var cpuWork = firstReceive + (settings.CpuLimit / parallelism) + shortestLastIo;
        return new LowerBound(cpuWork, receiveChain, firstReceive + longestPath);
    }

    private static TimeSpan Max(TimeSpan a, TimeSpan b) => a > b ? a : b;
}
