using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;

namespace PriorityAsync.MessagePump.Hosting;

/// <summary>
/// The lease health check (<c>AddLeaseHealthCheck</c>): the registered <see cref="LeaseKeeper"/>, if any, and every keeper
/// and pump of every <see cref="ILeaseKeepingService"/> (hosted pumps and processors), judged by
/// <see cref="LeaseHealthCheckOptions"/>; the worst decides.
/// </summary>
internal sealed class LeaseHealthCheck(IServiceProvider provider, LeaseHealthCheckOptions options) : IHealthCheck
{
    /// <inheritdoc />
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var keepers = new List<LeaseKeeper>();
        var pumps = new List<PriorityMessagePump>();
        if (provider.GetService<LeaseKeeper>() is { } registered)
        {
            keepers.Add(registered);
        }

        var services = provider.GetServices<IHostedService>().OfType<ILeaseKeepingService>().Concat(provider.GetServices<ILeaseKeepingService>());
        foreach (var service in services.Distinct(ReferenceEqualityComparer.Instance).Cast<ILeaseKeepingService>())
        {
            keepers.AddRange(service.LeaseKeepers.Where(k => !keepers.Contains(k)));
            pumps.AddRange(service.MessagePumps.Where(p => !pumps.Contains(p)));
        }

        // A pump's own keeper is judged through the pump, under the pump's name.
        var leases = keepers.Select(k => (k.Name, k.GetStatistics(), k.TimeProvider.GetUtcNow()))
            .Concat(pumps.Select(p => (p.Name, p.GetLeaseStatistics(), p.TimeProvider.GetUtcNow())));
        var result = Judge(leases, options);
        return Task.FromResult(JudgeReceives(result, pumps.Select(p => (p.Name, p.GetStatistics(), p.TimeProvider.GetUtcNow())), options));
    }

    /// <summary>
    /// Adds to <paramref name="keepers"/>'s verdict each pump whose receives have all failed for
    /// <see cref="LeaseHealthCheckOptions.ReceiveFailingDegradedAfter"/> (<c>Degraded</c>) or
    /// <see cref="LeaseHealthCheckOptions.ReceiveFailingUnhealthyAfter"/> (<c>Unhealthy</c>), and each whose stop ran
    /// past its timeout or left handlers running (<see cref="JudgeStop"/>), named in the description.
    /// </summary>
    internal static HealthCheckResult JudgeReceives(HealthCheckResult keepers, IEnumerable<(string Name, MessagePumpStatistics Statistics, DateTimeOffset Now)> pumps, LeaseHealthCheckOptions options)
    {
        var status = keepers.Status;
        var reasons = new List<string>();
        var data = new Dictionary<string, object>(keepers.Data, StringComparer.Ordinal);
        foreach (var (name, stats, now) in pumps)
        {
            data[$"{name}.receiveFailures"] = stats.ReceiveFailures;
            JudgeStop(name, stats, options, ref status, reasons, data);
            if (stats.ReceiveFailingSince is not { } since)
            {
                continue;
            }

            var failing = now - since;
            data[$"{name}.receiveFailingSeconds"] = failing.TotalSeconds;
            var verdict = failing >= options.ReceiveFailingUnhealthyAfter ? HealthStatus.Unhealthy
                : failing >= options.ReceiveFailingDegradedAfter ? HealthStatus.Degraded
                : HealthStatus.Healthy;
            if (verdict != HealthStatus.Healthy)
            {
                status = Worse(status, verdict);
                reasons.Add(Invariant($"'{name}' has failed to receive since {since:O} ({failing.TotalSeconds:0.#} s, {stats.ReceiveFailures} failed receives in all; the pump's log has each)"));
            }
        }

        if (reasons.Count == 0)
        {
            return new HealthCheckResult(status, keepers.Description, data: data);
        }

        var description = keepers.Status == HealthStatus.Healthy ? string.Join("; ", reasons) : $"{keepers.Description}; {string.Join("; ", reasons)}";
        return new HealthCheckResult(status, description, data: data);
    }

    /// <summary>
    /// A stop under way past its timeout by more than <see cref="LeaseHealthCheckOptions.StopOverrunTolerance"/> is
    /// <c>Unhealthy</c> (the host may kill the process with messages still locked); a stop that ended so is
    /// <c>Degraded</c>, as is a stop that left handlers running (they ignored their canceled token, and their messages
    /// may already be delivered again).
    /// </summary>
    private static void JudgeStop(string name, MessagePumpStatistics stats, LeaseHealthCheckOptions options, ref HealthStatus status, List<string> reasons, Dictionary<string, object> data)
    {
        if (stats.StopOverrun is { } overrun)
        {
            data[$"{name}.stopOverrunSeconds"] = overrun.TotalSeconds;
            if (overrun > options.StopOverrunTolerance)
            {
                if (stats.StoppingSince is { } stopping)
                {
                    status = Worse(status, HealthStatus.Unhealthy);
                    reasons.Add(Invariant($"'{name}' has been stopping since {stopping:O}, {overrun.TotalSeconds:0.#} s past its shutdown timeout"));
                }
                else
                {
                    status = Worse(status, HealthStatus.Degraded);
                    reasons.Add(Invariant($"'{name}' stopped {overrun.TotalSeconds:0.#} s past its shutdown timeout"));
                }
            }
        }

        if (stats.HandlersRunningAfterStop > 0)
        {
            data[$"{name}.handlersRunningAfterStop"] = stats.HandlersRunningAfterStop;
            status = Worse(status, HealthStatus.Degraded);
            reasons.Add(Invariant($"'{name}' gave up on {stats.HandlersRunningAfterStop} handler(s) at its stop that still run (they ignore their canceled token; their messages were abandoned)"));
        }
    }

    /// <summary>Judges each keeper's statistics at its clock's now; the worst status wins, and the description names why.</summary>
    internal static HealthCheckResult Judge(IEnumerable<(string Name, LeaseKeeperStatistics Statistics, DateTimeOffset Now)> keepers, LeaseHealthCheckOptions options)
    {
        var status = HealthStatus.Healthy;
        var reasons = new List<string>();
        var data = new Dictionary<string, object>(StringComparer.Ordinal);
        var count = 0;
        foreach (var (name, stats, now) in keepers)
        {
            count++;
            data[$"{name}.kept"] = stats.Kept;
            data[$"{name}.leasesLost"] = stats.LeasesLost;
            if (stats.MinRecentSlack is { } minSlack)
            {
                data[$"{name}.minRecentSlackSeconds"] = minSlack.TotalSeconds;

                // The thresholds are set for the default rule's 10 s of lock left at renewal; a lease planned with less
                // (a 5 s lock is renewed with 2.5 s left) is judged against them scaled to its plan, or a short lock
                // renewed on time would read Degraded for ever.
                var renewal = stats.WorstRecentRenewal ?? new LateRenewal(minSlack, TimeSpan.Zero);
                var slack = renewal.Slack;
                var unhealthy = options.UnhealthySlack * renewal.Scale;
                var degraded = options.DegradedSlack * renewal.Scale;
                if (slack < unhealthy)
                {
                    status = HealthStatus.Unhealthy;
                    reasons.Add(Late(name, renewal, unhealthy, options.UnhealthySlack));
                }
                else if (slack < degraded)
                {
                    status = Worse(status, HealthStatus.Degraded);
                    reasons.Add(Late(name, renewal, degraded, options.DegradedSlack));
                }
            }

            if (stats.LastLeaseLostAt is { } lost && now - lost < options.LostLeaseWindow)
            {
                status = Worse(status, HealthStatus.Degraded);
                reasons.Add(Invariant($"'{name}' lost a lease at {lost:O} (within {options.LostLeaseWindow})"));
            }
        }

        var description = reasons.Count == 0 ? $"{count} lease keeper(s) healthy" : string.Join("; ", reasons);
        return new HealthCheckResult(status, description, data: data);
    }

    private static string Late(string name, LateRenewal renewal, TimeSpan threshold, TimeSpan option) =>
        renewal.Scale < 1
            ? Invariant($"'{name}' renewed with {renewal.Slack.TotalSeconds:0.###} s of lock left (under {threshold.TotalSeconds:0.###} s: {option.TotalSeconds:0.###} s scaled to its {renewal.Planned.TotalSeconds:0.###} s renewal buffer)")
            : Invariant($"'{name}' renewed with {renewal.Slack.TotalSeconds:0.###} s of lock left (under {threshold.TotalSeconds:0.###} s)");

    private static HealthStatus Worse(HealthStatus a, HealthStatus b) => a < b ? a : b;

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
