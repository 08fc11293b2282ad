using Microsoft.Extensions.Diagnostics.HealthChecks;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.Hosting;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers the lease health check.</summary>
public static class LeaseHealthCheckBuilderExtensions
{
    /// <summary>
    /// Adds a health check over the lease slack and the lost locks of the registered <see cref="LeaseKeeper"/>
    /// (<c>AddLeaseKeeper</c>) and of every pump registered with <c>AddMessagePump</c>: <c>Unhealthy</c> when a keeper's
    /// least lock time left at renewal, over its last <see cref="LeaseKeeper.SlackWindow"/> renewals, is under
    /// <see cref="LeaseHealthCheckOptions.UnhealthySlack"/> (1 s); <c>Degraded</c> when it is under
    /// <see cref="LeaseHealthCheckOptions.DegradedSlack"/> (5 s) or a lease was lost within
    /// <see cref="LeaseHealthCheckOptions.LostLeaseWindow"/> (5 minutes); otherwise <c>Healthy</c>. The worst keeper decides.
    /// The thresholds are set for renewals planned with 10 s of lock left; one planned with less (a lock under 20 s) is
    /// judged against them scaled to its plan.
    /// </summary>
    /// <param name="builder">The health checks builder (<c>services.AddHealthChecks()</c>).</param>
    /// <param name="name">The check's name. Defaults to <c>leases</c>.</param>
    /// <param name="configure">Sets the thresholds; <see langword="null"/> for the defaults.</param>
    /// <param name="tags">Tags for filtering the check.</param>
    /// <returns><paramref name="builder"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> is null.</exception>
    /// <exception cref="ArgumentException">A threshold breaks its rule; the exception names it.</exception>
    public static IHealthChecksBuilder AddLeaseHealthCheck(
        this IHealthChecksBuilder builder,
        string name = "leases",
        Action<LeaseHealthCheckOptions>? configure = null,
        IEnumerable<string>? tags = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        var options = new LeaseHealthCheckOptions();
        configure?.Invoke(options);
        options.Validate();
        return builder.Add(new HealthCheckRegistration(name, provider => new LeaseHealthCheck(provider, options), failureStatus: null, tags));
    }
}
