using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using PriorityAsync;
using PriorityAsync.Messaging;
using PriorityAsync.Messaging.Hosting;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers message pumps as hosted services.</summary>
public static class MessagePumpServiceCollectionExtensions
{
    /// <summary>
    /// Registers a hosted <see cref="MessagePump"/> that consumes the source made by <paramref name="sourceFactory"/>
    /// with <paramref name="handler"/>. It runs on the <see cref="PriorityScheduler"/> registered in the container, or
    /// on a <see cref="PriorityTaskScheduler"/> of its own. Call once per pump.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="sourceFactory">Makes the queue to consume.</param>
    /// <param name="handler">Processes one message; it returns to complete it and throws to abandon it.</param>
    /// <param name="configure">Sets the pump's options; <see langword="null"/> for the defaults.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentNullException">An argument other than <paramref name="configure"/> is null.</exception>
    /// <exception cref="ArgumentException">An option breaks its rule (checked here, and again against the source when the service is created).</exception>
    public static IServiceCollection AddMessagePump(
        this IServiceCollection services,
        Func<IServiceProvider, IMessageSource> sourceFactory,
        Func<MessageContext, CancellationToken, Task> handler,
        Action<MessagePumpOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(sourceFactory);
        ArgumentNullException.ThrowIfNull(handler);
        var options = new MessagePumpOptions();
        configure?.Invoke(options);
        options.Validate(lockDuration: null, scheduler: null);
        services.AddSingleton<IHostedService>(provider => new MessagePumpHostedService(
            sourceFactory(provider),
            handler,
            options,
            provider.GetService<PriorityScheduler>(),
            provider.GetService<ILoggerFactory>()));
        return services;
    }
}
