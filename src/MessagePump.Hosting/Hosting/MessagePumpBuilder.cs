using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace PriorityAsync.MessagePump.Hosting;

/// <summary>
/// Configures one hosted <see cref="PriorityMessagePump"/> registered by
/// <see cref="MessagePumpServiceCollectionExtensions.AddMessagePump(IServiceCollection, string, Func{IServiceProvider, IMessageSource})"/>:
/// its named <see cref="MessagePumpOptions"/> and its handler.
/// </summary>
/// <remarks>
/// The options are the named options <see cref="Name"/>, read through <see cref="IOptionsMonitor{TOptions}"/> when
/// the host starts; <see cref="MessagePumpOptions.Name"/> defaults to the registration's name. Configuration sources
/// and <see cref="Configure"/> calls apply in the order they were added. Invalid options fail the host's start with an
/// <see cref="OptionsValidationException"/> naming the pump and the option.
/// </remarks>
public sealed class MessagePumpBuilder
{
    private Func<IServiceProvider, Func<MessageContext, CancellationToken, Task>>? _handlerFactory;

    internal MessagePumpBuilder(IServiceCollection services, string name)
    {
        Services = services;
        Name = name;
    }

    /// <summary>Gets the name of the pump's registration and of its options.</summary>
    public string Name { get; }

    /// <summary>Gets the service collection the pump is registered in.</summary>
    public IServiceCollection Services { get; }

    /// <summary>Adds an action that sets the pump's options; it runs when the options are first read.</summary>
    /// <param name="configure">Sets options.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="configure"/> is null.</exception>
    public MessagePumpBuilder Configure(Action<MessagePumpOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        Services.AddOptions<MessagePumpOptions>(Name).Configure(configure);
        return this;
    }

    /// <summary>
    /// Binds the pump's options to a section of the application's <see cref="IConfiguration"/> (registered in the
    /// container, as a host does), for example <c>MessagePumps:orders</c>. Keys are the option names; durations are
    /// <see cref="TimeSpan"/> strings such as <c>00:00:30</c>.
    /// </summary>
    /// <param name="configSectionPath">The section's path, with <c>:</c> between levels.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentException"><paramref name="configSectionPath"/> is null, empty or white space.</exception>
    public MessagePumpBuilder BindConfiguration(string configSectionPath)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(configSectionPath);
        Services.AddOptions<MessagePumpOptions>(Name).BindConfiguration(configSectionPath);
        return this;
    }

    /// <summary>Binds the pump's options to a configuration section, for example <c>configuration.GetSection("MessagePumps:orders")</c>.</summary>
    /// <param name="configuration">The section whose keys are the option names.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="configuration"/> is null.</exception>
    public MessagePumpBuilder Bind(IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        Services.AddOptions<MessagePumpOptions>(Name).Bind(configuration);
        return this;
    }

    /// <summary>
    /// Sets the handler to a <typeparamref name="THandler"/> resolved from a new scope for each message (registered as
    /// a scoped service unless already registered). The scope is disposed when the handler has finished, whether it
    /// returned or threw. Replaces any handler set before.
    /// </summary>
    /// <typeparam name="THandler">The handler type.</typeparam>
    /// <returns>This builder.</returns>
    public MessagePumpBuilder WithHandler<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler>()
        where THandler : class, IMessageHandler
    {
        Services.TryAddScoped<THandler>();
        _handlerFactory = provider => Scoped(
            provider,
            (services, context, cancellationToken) => services.GetRequiredService<THandler>().HandleAsync(context, cancellationToken));
        return this;
    }

    /// <summary>Sets the handler to a delegate called for each message, without a scope. Replaces any handler set before.</summary>
    /// <param name="handler">Processes one message; it returns to complete it and throws to abandon it.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handler"/> is null.</exception>
    public MessagePumpBuilder WithHandler(Func<MessageContext, CancellationToken, Task> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        _handlerFactory = _ => handler;
        return this;
    }

    /// <summary>
    /// Sets the handler to a delegate called for each message with the service provider of a new scope, disposed when
    /// the delegate has finished, whether it returned or threw. Replaces any handler set before.
    /// </summary>
    /// <param name="handler">Processes one message with the message's scope; it returns to complete it and throws to abandon it.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handler"/> is null.</exception>
    public MessagePumpBuilder WithHandler(Func<IServiceProvider, MessageContext, CancellationToken, Task> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        _handlerFactory = provider => Scoped(provider, handler);
        return this;
    }

    /// <summary>Creates the hosted service: reads the named options, makes the source and the handler, and creates the pump.</summary>
    internal MessagePumpHostedService CreateService(IServiceProvider provider, Func<IServiceProvider, IMessageSource> sourceFactory)
    {
        // The monitor's instance is this pump's own (built by its Configure calls); the pump copies it, and the meter
        // factory written here is the container's, the same at every read.
        var options = provider.GetRequiredService<IOptionsMonitor<MessagePumpOptions>>().Get(Name);
        options.MeterFactory ??= provider.GetService<System.Diagnostics.Metrics.IMeterFactory>(); // the container's meters, as hosts expect
        var handlerFactory = _handlerFactory
            ?? throw new InvalidOperationException($"The message pump '{Name}' has no handler: call WithHandler on the builder AddMessagePump returned.");
        var source = sourceFactory(provider)
            ?? throw new InvalidOperationException($"The source factory of the message pump '{Name}' returned null.");
        try
        {
            return new MessagePumpHostedService(
                source,
                handlerFactory(provider),
                options,
                HostedScheduler.Resolve(Services, provider, Name),
                provider.GetService<ILoggerFactory>());
        }
        catch (ArgumentException exception)
        {
            throw new InvalidOperationException($"Message pump '{Name}': {exception.Message}", exception);
        }
    }

    private static Func<MessageContext, CancellationToken, Task> Scoped(
        IServiceProvider provider,
        Func<IServiceProvider, MessageContext, CancellationToken, Task> handler)
    {
        var scopes = provider.GetRequiredService<IServiceScopeFactory>();

        // Plain awaits: the handler's continuations, and the scope's disposal, stay in the pump's processing lane.
        return async (context, cancellationToken) =>
        {
#pragma warning disable MA0004 // the handler runs in the pump's processing lane; ConfigureAwait(false) would leave it
            await using var scope = scopes.CreateAsyncScope();
            await handler(scope.ServiceProvider, context, cancellationToken);
#pragma warning restore MA0004
        };
    }
}
