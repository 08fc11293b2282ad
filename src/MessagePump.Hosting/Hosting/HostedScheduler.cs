using Microsoft.Extensions.DependencyInjection;

namespace PriorityAsync.MessagePump.Hosting;

/// <summary>
/// Finds the scheduler a hosted pump runs on: whatever the user registered, under whatever type derived from
/// <see cref="PriorityScheduler"/> (<see cref="PriorityTaskScheduler"/> included), never silently a default one.
/// </summary>
internal static class HostedScheduler
{
    /// <summary>
    /// Resolves every unkeyed registration of <paramref name="services"/> whose service type is a
    /// <see cref="PriorityScheduler"/>: none gives <see langword="null"/> (the pump creates its own), one instance (under
    /// one or several types) is used, several different instances fail with what to register.
    /// </summary>
    /// <param name="services">The collection the pump was registered in; read when the host starts, so every registration is in it.</param>
    /// <param name="provider">The provider built from <paramref name="services"/>.</param>
    /// <param name="pumpName">The pump's name, for the message.</param>
    /// <returns>The registered scheduler, or <see langword="null"/> when there is none.</returns>
    /// <exception cref="InvalidOperationException">Several different schedulers are registered.</exception>
    public static PriorityScheduler? Resolve(IServiceCollection services, IServiceProvider provider, string pumpName)
    {
        var types = new List<Type>();
        foreach (var descriptor in services)
        {
            if (!descriptor.IsKeyedService
                && typeof(PriorityScheduler).IsAssignableFrom(descriptor.ServiceType)
                && !types.Contains(descriptor.ServiceType))
            {
                types.Add(descriptor.ServiceType);
            }
        }

        PriorityScheduler? found = null;
        Type? foundType = null;
        foreach (var type in types)
        {
            var scheduler = (PriorityScheduler)provider.GetRequiredService(type);
            if (found is null)
            {
                (found, foundType) = (scheduler, type);
            }
            else if (!ReferenceEquals(found, scheduler))
            {
                throw new InvalidOperationException(
                    $"Message pump '{pumpName}': the container holds two different schedulers, a {foundType!.Name} " +
                    $"'{found.Name}' and a {type.Name} '{scheduler.Name}', and the pump cannot tell which to run on. Register one " +
                    "scheduler: services.AddPriorityScheduler(options => ...) registers a PriorityTaskScheduler under both " +
                    "PriorityTaskScheduler and PriorityScheduler.");
            }
        }

        return found;
    }
}
