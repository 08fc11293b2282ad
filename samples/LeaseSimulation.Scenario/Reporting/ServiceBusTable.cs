using System.Globalization;
using LeaseSimulation.Results;

namespace LeaseSimulation.Reporting;

/// <summary>
/// Formats the Service Bus rows (<c>--broker servicebus</c>) as the head-to-head table: per strategy and context, the
/// messages completed and dead-lettered, the locks lost, the duplicates (handler runs of a message beyond its first) and
/// the renew calls per lock duration of lock held (on the test broker).
/// </summary>
public static class ServiceBusTable
{
    private static readonly string[] Headers =
    [
        "context", "strategy", "cpu ms", "messages", "completed", "dead-lettered", "leases lost", "duplicates", "handler runs", "renews / lock", "total s", "wall s",
    ];

    /// <summary>Formats the results that have Service Bus counts; empty when none has.</summary>
    /// <param name="results">The results, in row order.</param>
    /// <returns>The table, one line per row, ending with a newline; or the empty string.</returns>
    public static string ToMarkdown(IEnumerable<SimulationResult> results)
    {
        ArgumentNullException.ThrowIfNull(results);
        var rows = results.Where(r => r.LeasesLost is not null).Select(ToCells).ToList();
        if (rows.Count == 0)
        {
            return string.Empty;
        }

        return MarkdownTable.Format(Headers, rows, textColumns: 2);
    }

    private static string[] ToCells(SimulationResult r) =>
    [
        r.Context,
        r.Strategy,
        r.CpuMs.ToString("0", CultureInfo.InvariantCulture),
        Integer(r.Messages),
        Integer(r.Completed),
        Integer(r.DeadLettered ?? 0),
        Integer(r.LeasesLost ?? 0),
        Integer(r.Duplicates ?? 0),
        Integer(r.HandlerRuns ?? 0),
        r.RenewCallsPerLockDuration is { } perLock ? perLock.ToString("0.00", CultureInfo.InvariantCulture) : "-",
        (r.StoppedAtDeadline ? "*" : string.Empty) + r.TotalSeconds.ToString("0.0", CultureInfo.InvariantCulture),
        r.WallTime.TotalSeconds.ToString("0.0", CultureInfo.InvariantCulture),
    ];

    private static string Integer(int value) => value.ToString(CultureInfo.InvariantCulture);
}
