using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using PriorityAsync.Reliability.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.Reliability.Tests.Pump;

/// <summary>
/// The pump stopped at seeded random moments against a slow, failing and sometimes silent broker (see
/// <see cref="PumpStopRound"/>): StopAsync returns within its bound, leaves nothing locked, and its books are final
/// and balanced; a second pump then ends every message exactly once. A failing seed prints its replay command.
/// </summary>
public class PumpStopTests(ITestOutputHelper output)
{
    private const string ReplayCommand = "PRIORITYASYNC_SWARM_SEED={0} dotnet test tests/Reliability.Tests -c Release --filter FullyQualifiedName~Reliability.Tests.Pump.PumpStopTests";

    [Fact]
    public void StopAtRandomMoments_SlowFailingAndSilentBroker_BoundedNothingLockedBooksBalanced()
    {
        var seeds = ReliabilitySettings.ReplaySeed is { } one ? [one] : Enumerable.Range(1, ReliabilitySettings.Long ? 50_000 : 2_000).ToArray();
        var failures = new ConcurrentBag<(int Seed, string Report)>();
        var silenced = 0;
        var watch = Stopwatch.StartNew();
        Parallel.ForEach(seeds, new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount }, seed =>
        {
            try
            {
                var (violations, summary, silent) = PumpStopRound.Run(seed);
                if (silent)
                {
                    Interlocked.Increment(ref silenced);
                }

                if (violations.Count > 0)
                {
                    failures.Add((seed, $"{summary}; broke: {string.Join("; ", violations)}"));
                }
            }
            catch (Exception ex)
            {
                failures.Add((seed, $"seed {seed} threw {ex}"));
            }
        });

        output.WriteLine($"{seeds.Length} stop moments in {watch.Elapsed.TotalSeconds:0.0} s; {silenced} met a silent settle call; {failures.Count} failed.");
        var report = failures.OrderBy(f => f.Seed).Take(10)
            .Select(f => $"{f.Report}{Environment.NewLine}  replay: {string.Format(CultureInfo.InvariantCulture, ReplayCommand, f.Seed)}")
            .ToArray();
        foreach (var line in report)
        {
            output.WriteLine(line);
        }

        failures.Should().BeEmpty(string.Join(Environment.NewLine, report));
        if (seeds.Length > 100)
        {
            silenced.Should().BePositive("the scenario must reach silent settle calls, or it proves nothing about them");
        }
    }
}
