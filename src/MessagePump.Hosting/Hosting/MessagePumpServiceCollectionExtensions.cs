using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using PriorityAsync;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.Hosting;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers message pumps as hosted services.</summary>
public static class MessagePumpServiceCollectionExtensions
{
    /// <summary>The name of a pump registered without one: the default of <see cref="MessagePumpOptions.Name"/>, <c>message-pump</c>.</summary>
    internal const string DefaultName = "message-pump";

    /// <summary>
    /// Registers a hosted <see cref="PriorityMessagePump"/> named <paramref name="name"/> that consumes the source made by
    /// <paramref name="sourceFactory"/>; set its handler, and its options, on the builder returned.
    /// </summary>
    /// <remarks>
    /// <para>
    /// The pump's options are the named options <paramref name="name"/> (<see cref="IOptionsMonitor{TOptions}"/>),
    /// read when the host starts; <see cref="MessagePumpOptions.Name"/> defaults to <paramref name="name"/>. They are
    /// validated at the host's start (an <see cref="OptionsValidationException"/> naming the pump and the option), and
    /// again against the source and the scheduler when the pump is created.
    /// </para>
    /// <para>
    /// The pump runs on the scheduler registered in the container under any type derived from <see cref="PriorityScheduler"/>
    /// (<see cref="PrioritySchedulerServiceCollectionExtensions.AddPriorityScheduler"/>, or your own registration of a
    /// <see cref="PriorityTaskScheduler"/> or a <see cref="PriorityScheduler"/>), or, when there is none, on a
    /// <see cref="PriorityTaskScheduler"/> of its own; two different registered schedulers fail the host's start. The hosted service is also registered as a keyed singleton
    /// <see cref="MessagePumpHostedService"/> under <paramref name="name"/>, to reach the pump and its statistics.
    /// </para>
    /// </remarks>
    /// <param name="services">The service collection.</param>
    /// <param name="name">The pump's name, unique in the collection; its options' name.</param>
    /// <param name="sourceFactory">Makes the queue to consume, from the root service provider.</param>
    /// <returns>The pump's builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> or <paramref name="sourceFactory"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is null, empty or white space, or a pump of that name is already registered.</exception>
    public static MessagePumpBuilder AddMessagePump(
        this IServiceCollection services,
        string name,
        Func<IServiceProvider, IMessageSource> sourceFactory)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ArgumentNullException.ThrowIfNull(sourceFactory);
        if (services.Any(d => d.IsKeyedService && d.ServiceType == typeof(MessagePumpHostedService) && name.Equals(d.ServiceKey)))
        {
            throw new ArgumentException($"A message pump named '{name}' is already registered.", nameof(name));
        }

        var builder = new MessagePumpBuilder(services, name);

        // First, so that configuration and Configure calls may still set another Name.
        services.AddOptions<MessagePumpOptions>(name).Configure(o => o.Name = name).ValidateOnStart();
        services.AddSingleton<IValidateOptions<MessagePumpOptions>>(new MessagePumpOptionsValidator(name));
        services.AddKeyedSingleton(name, (provider, _) => builder.CreateService(provider, sourceFactory));
        services.AddSingleton<IHostedService>(provider => provider.GetRequiredKeyedService<MessagePumpHostedService>(name));
        return builder;
    }

    /// <summary>
    /// Registers a hosted <see cref="PriorityMessagePump"/> named <see cref="DefaultName"/>; see
    /// <see cref="AddMessagePump(IServiceCollection, string, Func{IServiceProvider, IMessageSource})"/>.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="sourceFactory">Makes the queue to consume, from the root service provider.</param>
    /// <returns>The pump's builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> or <paramref name="sourceFactory"/> is null.</exception>
    /// <exception cref="ArgumentException">A pump named <see cref="DefaultName"/> is already registered.</exception>
    public static MessagePumpBuilder AddMessagePump(this IServiceCollection services, Func<IServiceProvider, IMessageSource> sourceFactory)
        => services.AddMessagePump(DefaultName, sourceFactory);

    /// <summary>
    /// Registers a hosted <see cref="PriorityMessagePump"/> named <paramref name="name"/> whose handler is a
    /// <typeparamref name="THandler"/> resolved from a new scope for each message; see
    /// <see cref="AddMessagePump(IServiceCollection, string, Func{IServiceProvider, IMessageSource})"/> and
    /// <see cref="MessagePumpBuilder.WithHandler{THandler}"/>.
    /// </summary>
    /// <typeparam name="THandler">The handler type.</typeparam>
    /// <param name="services">The service collection.</param>
    /// <param name="name">The pump's name, unique in the collection; its options' name.</param>
    /// <param name="sourceFactory">Makes the queue to consume, from the root service provider.</param>
    /// <returns>The pump's builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> or <paramref name="sourceFactory"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is null, empty or white space, or a pump of that name is already registered.</exception>
    public static MessagePumpBuilder AddMessagePump<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler>(
        this IServiceCollection services,
        string name,
        Func<IServiceProvider, IMessageSource> sourceFactory)
        where THandler : class, IMessageHandler
        => services.AddMessagePump(name, sourceFactory).WithHandler<THandler>();

    /// <summary>
    /// Registers a hosted <see cref="PriorityMessagePump"/> that consumes the source made by <paramref name="sourceFactory"/>
    /// with <paramref name="handler"/>, named by the <see cref="MessagePumpOptions.Name"/> that
    /// <paramref name="configure"/> sets (<see cref="DefaultName"/> by default). The same as
    /// <c>AddMessagePump(name, sourceFactory).Configure(configure).WithHandler(handler)</c>, except that the options are
    /// also checked here (<paramref name="configure"/> runs once on a scratch instance for that, and again when the options are read).
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="sourceFactory">Makes the queue to consume.</param>
    /// <param name="handler">Processes one message; it returns to complete it and throws to abandon it.</param>
    /// <param name="configure">Sets the pump's options; <see langword="null"/> for the defaults.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentNullException">An argument other than <paramref name="configure"/> is null.</exception>
    /// <exception cref="ArgumentException">An option breaks its rule (checked here, and again when the host starts), or a pump of that name is already registered.</exception>
    public static IServiceCollection AddMessagePump(
        this IServiceCollection services,
        Func<IServiceProvider, IMessageSource> sourceFactory,
        Func<MessageContext, CancellationToken, Task> handler,
        Action<MessagePumpOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(sourceFactory);
        ArgumentNullException.ThrowIfNull(handler);
        var probe = new MessagePumpOptions();
        configure?.Invoke(probe);
        probe.Validate(lockDuration: null, scheduler: null);
        var builder = services.AddMessagePump(probe.Name, sourceFactory).WithHandler(handler);
        if (configure is not null)
        {
            builder.Configure(configure);
        }

        return services;
    }
}
