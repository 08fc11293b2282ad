using System.Collections.Concurrent;
using System.Diagnostics;
using PriorityAsync.Reliability.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.Reliability.Tests.Swarm;

/// <summary>
/// The deterministic simulation swarm: thousands of seeded pump runs on virtual time (FoundationDB's and TigerBeetle's
/// way of earning trust), each checked against the accounting invariants. A failing seed is printed with the command
/// that replays it bit for bit.
/// </summary>
public class SwarmTests(ITestOutputHelper output)
{
    private const string ReplayCommand = "PRIORITYASYNC_SWARM_SEED={0} dotnet test tests/Reliability.Tests -c Release --filter FullyQualifiedName~Swarm";

    [Fact]
    public void EverySeed_KeepsTheBooks_LeavesNothingLockedAtStop_AndEndsEachMessageOnce()
    {
        var seeds = ReliabilitySettings.ReplaySeed is { } one ? [one] : Enumerable.Range(1, ReliabilitySettings.SwarmSeeds).ToArray();
        var failures = new ConcurrentBag<SwarmOutcome>();
        var totals = new SwarmTotals();
        var crashes = new ConcurrentBag<(int Seed, Exception Error)>();
        var watch = Stopwatch.StartNew();
        Parallel.ForEach(seeds, new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount }, seed =>
        {
            try
            {
                var outcome = SwarmScenario.Run(seed);
                totals.Add(outcome);
                if (outcome.Violations.Count > 0)
                {
                    failures.Add(outcome);
                }
            }
            catch (Exception ex)
            {
                crashes.Add((seed, ex));
            }
        });

        output.WriteLine($"{seeds.Length} seeds in {watch.Elapsed.TotalSeconds:0.0} s; {failures.Count} broke an invariant, {crashes.Count} threw.");
        output.WriteLine(totals.ToString());
        var report = failures.OrderBy(f => f.Seed).Take(10).Select(f => $"{f.Describe()}{Environment.NewLine}  replay: {string.Format(System.Globalization.CultureInfo.InvariantCulture, ReplayCommand, f.Seed)}")
            .Concat(crashes.OrderBy(c => c.Seed).Take(10).Select(c => $"seed {c.Seed} threw {c.Error}{Environment.NewLine}  replay: {string.Format(System.Globalization.CultureInfo.InvariantCulture, ReplayCommand, c.Seed)}"))
            .ToArray();
        foreach (var line in report)
        {
            output.WriteLine(line);
        }

        (failures.Count + crashes.Count).Should().Be(0, string.Join(Environment.NewLine, report));
    }

    [Theory]
    [InlineData(7)]
    [InlineData(4242)]
    public void SameSeed_SameRun_BitForBit(int seed)
    {
        var first = SwarmScenario.Run(seed);
        var second = SwarmScenario.Run(seed);

        second.Should().BeEquivalentTo(first);
    }
}
