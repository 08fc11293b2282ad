using Microsoft.Extensions.DependencyInjection.Extensions;
using PriorityAsync;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers the <see cref="PriorityTaskScheduler"/> that hosted message pumps run on.</summary>
public static class PrioritySchedulerServiceCollectionExtensions
{
    /// <summary>
    /// Registers one <see cref="PriorityTaskScheduler"/>, created on first use with the options <paramref name="configure"/>
    /// sets, under both <see cref="PriorityTaskScheduler"/> and <see cref="PriorityScheduler"/> (the same instance); every
    /// pump registered with <c>AddMessagePump</c> runs on it, and the container disposes it after the pumps have stopped.
    /// </summary>
    /// <remarks>
    /// Registering a scheduler yourself works too, under either type (<c>services.AddSingleton(new PriorityTaskScheduler(...))</c>):
    /// the hosted pumps use whatever <see cref="PriorityScheduler"/> the container holds, and fail at the host's start
    /// when it holds two different ones.
    /// </remarks>
    /// <param name="services">The service collection.</param>
    /// <param name="configure">Sets the scheduler's options (worker count, reserved lease workers, worker priority, ...); <see langword="null"/> for the defaults.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    /// <exception cref="ArgumentException">A <see cref="PriorityScheduler"/> (of any type) is already registered in <paramref name="services"/>.</exception>
    public static IServiceCollection AddPriorityScheduler(this IServiceCollection services, Action<PriorityTaskSchedulerOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        foreach (var descriptor in services)
        {
            if (!descriptor.IsKeyedService && typeof(PriorityScheduler).IsAssignableFrom(descriptor.ServiceType))
            {
                throw new ArgumentException(
                    $"A scheduler is already registered as {descriptor.ServiceType.Name}; register one scheduler only (AddPriorityScheduler, or your own, not both).",
                    nameof(services));
            }
        }

        services.TryAddSingleton(_ =>
        {
            var options = new PriorityTaskSchedulerOptions();
            configure?.Invoke(options);
            return new PriorityTaskScheduler(options);
        });
        services.TryAddSingleton<PriorityScheduler>(provider => provider.GetRequiredService<PriorityTaskScheduler>());
        return services;
    }
}
