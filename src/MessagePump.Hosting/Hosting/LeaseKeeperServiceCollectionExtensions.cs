using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using PriorityAsync;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.Hosting;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers a <see cref="LeaseKeeper"/> on the scheduler the application registered.</summary>
public static class LeaseKeeperServiceCollectionExtensions
{
    /// <summary>
    /// Registers one <see cref="LeaseKeeper"/>, created on first use on the <see cref="PriorityScheduler"/> the container
    /// holds (<c>AddPriorityScheduler</c>, or your own), with the container's logger factory and meter factory. The
    /// container disposes it (stopping it) before the scheduler, which it was created after.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="configure">Sets the keeper's options; <see langword="null"/> for the defaults.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    /// <remarks>Resolving the keeper throws <see cref="InvalidOperationException"/> when the container holds no scheduler, or two different ones.</remarks>
    public static IServiceCollection AddLeaseKeeper(this IServiceCollection services, Action<LeaseKeeperOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.TryAddSingleton(provider =>
        {
            var scheduler = HostedScheduler.Resolve(services, provider, "lease keeper")
                ?? throw new InvalidOperationException("AddLeaseKeeper: the container holds no PriorityScheduler. Register one: services.AddPriorityScheduler(), or your own under PriorityScheduler.");
            var options = new LeaseKeeperOptions();
            configure?.Invoke(options);
            options.MeterFactory ??= provider.GetService<System.Diagnostics.Metrics.IMeterFactory>();
            return new LeaseKeeper(scheduler, options, provider.GetService<ILoggerFactory>()?.CreateLogger<LeaseKeeper>());
        });
        return services;
    }
}
