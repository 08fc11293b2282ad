using System.Collections.Concurrent;
using System.Text.RegularExpressions;

namespace PriorityAsync.Reliability.Tests.Swarm;

/// <summary>
/// A seed replays bit for bit: two runs of the same seed log the same events, in the same order, with the same text
/// (lock tokens masked: they are the broker's identifiers, not inputs), and end with the same books. Checked over many
/// seeds, since a stray thread-pool hop or hash order shows up in a few seeds only.
/// </summary>
public partial class SwarmReplayTests
{
    private const int Seeds = 5000;

    [Fact]
    public void ManySeeds_TwoRunsEach_IdenticalEventTraceAndBooks()
    {
        var diverged = new ConcurrentBag<string>();
        Parallel.For(1, Seeds + 1, new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount }, seed =>
        {
            var (firstTrace, first) = RunTraced(seed);
            var (secondTrace, second) = RunTraced(seed);
            var at = Enumerable.Range(0, Math.Min(firstTrace.Count, secondTrace.Count)).FirstOrDefault(i => firstTrace[i] != secondTrace[i], -1);
            if (at >= 0 || firstTrace.Count != secondTrace.Count || first.Describe() != second.Describe() || first.Stopped != second.Stopped || first.Drain != second.Drain)
            {
                diverged.Add(at >= 0
                    ? $"seed {seed}: event {at} differs:\n  {firstTrace[at]}\n  {secondTrace[at]}"
                    : $"seed {seed}: {firstTrace.Count} vs {secondTrace.Count} events; {first.Describe()} vs {second.Describe()}");
            }
        });

        diverged.Should().BeEmpty("a seed must replay bit for bit:\n{0}", string.Join("\n", diverged.OrderBy(d => d).Take(5)));
    }

    private static (List<string> Trace, SwarmOutcome Outcome) RunTraced(int seed)
    {
        var logger = new ListLogger();
        var outcome = SwarmScenario.Run(seed, logger);
        var trace = logger.Entries.Select(e => $"{e.EventId.Id} {e.Level} {LockToken().Replace(e.Message, "<lock>")} {e.Exception?.GetType().Name} {(e.Exception is null ? string.Empty : LockToken().Replace(e.Exception.Message, "<lock>"))}").ToList();
        trace.Should().NotBeEmpty();
        return (trace, outcome);
    }

    [GeneratedRegex("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")]
    private static partial Regex LockToken();
}
