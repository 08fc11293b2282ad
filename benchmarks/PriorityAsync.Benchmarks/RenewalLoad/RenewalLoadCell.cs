namespace PriorityAsync.Benchmarks.RenewalLoad;

/// <summary>One cell of the renewal-load table.</summary>
/// <param name="CallsPerSecond">Renew calls sent to the broker per second of the window.</param>
/// <param name="LeasesPerSecond">Leases those calls renewed (asked to renew) per second.</param>
/// <param name="LeasesLost">Leases the pump lost during the whole cell.</param>
internal sealed record RenewalLoadCell(double CallsPerSecond, double LeasesPerSecond, long LeasesLost)
{
    /// <summary>Gets the leases per call: 1 for one call per lease.</summary>
    public double LeasesPerCall => CallsPerSecond == 0 ? 0 : LeasesPerSecond / CallsPerSecond;
}
