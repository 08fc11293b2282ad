using System.Globalization;
using LeaseSimulation.Results;

namespace LeaseSimulation.Cli;

/// <summary>Whether a demonstration row showed what it must (<see cref="DemoRun.Expected"/>), in one line.</summary>
/// <param name="AsExpected">Whether the row showed its expected outcome.</param>
/// <param name="Text">The line: the outcome, the reason, and for a row that kept its leases the wall-time headroom left.</param>
public sealed record DemoVerdict(bool AsExpected, string Text)
{
    /// <summary>Judges <paramref name="result"/> against <paramref name="demo"/>'s expectation.</summary>
    /// <param name="demo">The planned row.</param>
    /// <param name="result">What the row measured.</param>
    /// <returns>The verdict.</returns>
    public static DemoVerdict Judge(DemoRun demo, SimulationResult result)
    {
        ArgumentNullException.ThrowIfNull(demo);
        ArgumentNullException.ThrowIfNull(result);
        var settings = demo.Run.Settings;
        var slackMs = (settings.LeaseDuration - settings.RenewInterval).TotalMilliseconds;
        var label = $"{result.Context} {result.Strategy}";
        var outcome = result.Lost == 0 ? "0 lost" : $"lost {result.Lost} of {result.Messages}";
        var late = $"worst renewal {Ms(result.MaxLeaseLatenessMs)} ms late of {Ms(slackMs)} ms slack";
        if (demo.Expected == ExpectedOutcome.LosesLeases)
        {
            return result.Lost > 0
                ? new DemoVerdict(true, $"{label}: {outcome}, as expected ({demo.Reason}; {late}).")
                : new DemoVerdict(false, $"{label}: UNEXPECTED, {outcome} (expected losses: {demo.Reason}; {late}).");
        }

        if (result.Lost == 0 && result.Completed == result.Messages)
        {
            var headroomMs = (slackMs - result.MaxLeaseLatenessMs) * settings.TimeScale;
            return new DemoVerdict(true, $"{label}: 0 lost, as expected ({demo.Reason}; {late}: {Ms(headroomMs)} ms of wall time to spare).");
        }

        return new DemoVerdict(
            false,
            $"{label}: UNEXPECTED, {outcome}, {result.Completed} completed (expected none lost: {demo.Reason}; {late}, "
            + $"{Ms(slackMs * settings.TimeScale)} ms of wall time at --time-scale {settings.TimeScale.ToString(CultureInfo.InvariantCulture)}: "
            + "the machine held the process back longer than that; try a larger --time-scale).");
    }

    private static string Ms(double value) => value.ToString("0", CultureInfo.InvariantCulture);
}
