using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;

namespace PriorityAsync.MessagePump.Hosting;

/// <summary>
/// The lease health check (<c>AddLeaseHealthCheck</c>): the registered <see cref="LeaseKeeper"/>, if any, and every
/// hosted pump's keeper, judged by <see cref="LeaseHealthCheckOptions"/>; the worst keeper decides.
/// </summary>
internal sealed class LeaseHealthCheck(IServiceProvider provider, LeaseHealthCheckOptions options) : IHealthCheck
{
    /// <inheritdoc />
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var keepers = new List<LeaseKeeper>();
        if (provider.GetService<LeaseKeeper>() is { } registered)
        {
            keepers.Add(registered);
        }

        foreach (var hosted in provider.GetServices<IHostedService>().OfType<MessagePumpHostedService>())
        {
            keepers.Add(hosted.Pump.Keeper);
        }

        return Task.FromResult(Judge(keepers.Select(k => (k.Name, k.GetStatistics(), k.TimeProvider.GetUtcNow())), options));
    }

    /// <summary>Judges each keeper's statistics at its clock's now; the worst status wins, and the description names why.</summary>
    internal static HealthCheckResult Judge(IEnumerable<(string Name, LeaseKeeperStatistics Statistics, DateTimeOffset Now)> keepers, LeaseHealthCheckOptions options)
    {
        var status = HealthStatus.Healthy;
        var reasons = new List<string>();
        var data = new Dictionary<string, object>(StringComparer.Ordinal);
        foreach (var (name, stats, now) in keepers)
        {
            data[$"{name}.kept"] = stats.Kept;
            data[$"{name}.leasesLost"] = stats.LeasesLost;
            if (stats.MinRecentSlack is { } slack)
            {
                data[$"{name}.minRecentSlackSeconds"] = slack.TotalSeconds;
                if (slack < options.UnhealthySlack)
                {
                    status = HealthStatus.Unhealthy;
                    reasons.Add(Invariant($"'{name}' renewed with {slack.TotalSeconds:0.###} s of lock left (under {options.UnhealthySlack.TotalSeconds:0.###} s)"));
                }
                else if (slack < options.DegradedSlack)
                {
                    status = Worse(status, HealthStatus.Degraded);
                    reasons.Add(Invariant($"'{name}' renewed with {slack.TotalSeconds:0.###} s of lock left (under {options.DegradedSlack.TotalSeconds:0.###} s)"));
                }
            }

            if (stats.LastLeaseLostAt is { } lost && now - lost < options.LostLeaseWindow)
            {
                status = Worse(status, HealthStatus.Degraded);
                reasons.Add(Invariant($"'{name}' lost a lease at {lost:O} (within {options.LostLeaseWindow})"));
            }
        }

        var description = reasons.Count == 0 ? $"{data.Count / 2} lease keeper(s) healthy" : string.Join("; ", reasons);
        return new HealthCheckResult(status, description, data: data);
    }

    private static HealthStatus Worse(HealthStatus a, HealthStatus b) => a < b ? a : b;

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
