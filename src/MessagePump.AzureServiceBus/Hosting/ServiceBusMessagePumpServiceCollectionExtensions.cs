using Azure.Messaging.ServiceBus;
using Azure.Core;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.AzureServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Hosting;
using PriorityAsync.MessagePump.Hosting;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers hosted message pumps that consume Azure Service Bus.</summary>
public static class ServiceBusMessagePumpServiceCollectionExtensions
{
    /// <summary>
    /// Registers a hosted <see cref="PriorityMessagePump"/> named <paramref name="name"/> (see
    /// <see cref="MessagePumpServiceCollectionExtensions.AddMessagePump(IServiceCollection, string, Func{IServiceProvider, IMessageSource})"/>)
    /// whose source is the Service Bus entity that <paramref name="configuration"/> describes (<see cref="ServiceBusSourceSettings"/>:
    /// <c>ConnectionString</c> or <c>FullyQualifiedNamespace</c>; <c>QueueName</c>, or <c>TopicName</c> and
    /// <c>SubscriptionName</c>; <c>MaxConcurrentSessions</c> for sessions). Set the handler and the pump's options on
    /// the builder returned.
    /// </summary>
    /// <remarks>
    /// The settings are validated when the host starts (an <see cref="OptionsValidationException"/> naming the pump
    /// and the setting). The transport (one <c>ServiceBusClient</c>) and the source are singletons keyed by
    /// <paramref name="name"/>, disposed by the container after the pump has stopped. With <c>FullyQualifiedNamespace</c>
    /// the pump uses the <see cref="TokenCredential"/> registered in the container (for example <c>DefaultAzureCredential</c>).
    /// </remarks>
    /// <param name="services">The service collection.</param>
    /// <param name="name">The pump's name, unique in the collection.</param>
    /// <param name="configuration">The section holding the <see cref="ServiceBusSourceSettings"/>.</param>
    /// <returns>The pump's builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> or <paramref name="configuration"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, or a pump of that name is already registered.</exception>
    public static MessagePumpBuilder AddServiceBusMessagePump(this IServiceCollection services, string name, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        return services.AddServiceBusMessagePump(name, settings =>
        {
            configuration.Bind(settings);
            configuration.Get<SourceSection>()?.CopyTo(settings.Source); // the source's options sit beside the settings
        });
    }

    /// <summary>
    /// Registers a hosted <see cref="PriorityMessagePump"/> named <paramref name="name"/> whose source is the Service Bus
    /// entity that <paramref name="configure"/> describes; see <see cref="AddServiceBusMessagePump(IServiceCollection, string, IConfiguration)"/>.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="name">The pump's name, unique in the collection.</param>
    /// <param name="configure">Fills the <see cref="ServiceBusSourceSettings"/>.</param>
    /// <returns>The pump's builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> or <paramref name="configure"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, or a pump of that name is already registered.</exception>
    public static MessagePumpBuilder AddServiceBusMessagePump(this IServiceCollection services, string name, Action<ServiceBusSourceSettings> configure)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ArgumentNullException.ThrowIfNull(configure);
        var builder = services.AddMessagePump(name, provider => provider.GetRequiredKeyedService<IMessageSource>(SourceKey(name)));
        services.AddOptions<ServiceBusSourceSettings>(name).Configure(configure).ValidateOnStart();
        services.AddSingleton<IValidateOptions<ServiceBusSourceSettings>>(new SettingsValidator(name));
        services.AddKeyedSingleton(SourceKey(name), (provider, _) => CreateTransport(provider, name));
        services.AddKeyedSingleton(SourceKey(name), (provider, key) =>
        {
            var settings = provider.GetRequiredService<IOptionsMonitor<ServiceBusSourceSettings>>().Get(name);
            var transport = provider.GetRequiredKeyedService<ServiceBusTransport>(key);
            return transport.Open(settings.ToEntity(), settings.MaxConcurrentSessions, settings.ToSourceOptions());
        });
        return builder;
    }

    private static string SourceKey(string name) => $"PriorityAsync.MessagePump.AzureServiceBus:{name}";

    private static ServiceBusTransport CreateTransport(IServiceProvider provider, string name)
    {
        var settings = provider.GetRequiredService<IOptionsMonitor<ServiceBusSourceSettings>>().Get(name);
        var options = new ServiceBusTransportOptions { ReadEntityProperties = false };
        if (!string.IsNullOrWhiteSpace(settings.ConnectionString))
        {
            return new ServiceBusTransport(settings.ConnectionString, options);
        }

        var credential = provider.GetService<TokenCredential>()
            ?? throw new InvalidOperationException($"Message pump '{name}' connects to the namespace '{settings.FullyQualifiedNamespace}' with a token credential, but the container has no TokenCredential: register one, e.g. services.AddSingleton<TokenCredential>(new DefaultAzureCredential()).");
        return new ServiceBusTransport(settings.FullyQualifiedNamespace!, credential, options);
    }

    /// <summary>The source's options as configuration holds them, in the settings' own section (flat keys).</summary>
    internal sealed class SourceSection
    {
        public SubQueue? SubQueue { get; set; }

        public TimeSpan? LockDuration { get; set; }

        public TimeSpan? LockDurationTolerance { get; set; }

        public int? PrefetchCount { get; set; }

        public TimeSpan? MaxWaitTime { get; set; }

        public void CopyTo(ServiceBusSourceOptions options)
        {
            options.SubQueue = SubQueue ?? options.SubQueue;
            options.LockDuration = LockDuration ?? options.LockDuration;
            options.LockDurationTolerance = LockDurationTolerance ?? options.LockDurationTolerance;
            options.PrefetchCount = PrefetchCount ?? options.PrefetchCount;
            options.MaxWaitTime = MaxWaitTime ?? options.MaxWaitTime;
        }
    }

    /// <summary>Validates a pump's Service Bus settings when the host starts, naming the pump.</summary>
    private sealed class SettingsValidator(string name) : IValidateOptions<ServiceBusSourceSettings>
    {
        public ValidateOptionsResult Validate(string? optionsName, ServiceBusSourceSettings options)
        {
            if (!string.Equals(optionsName, name, StringComparison.Ordinal))
            {
                return ValidateOptionsResult.Skip;
            }

            try
            {
                options.Validate();
                return ValidateOptionsResult.Success;
            }
            catch (ArgumentException ex)
            {
                return ValidateOptionsResult.Fail($"The Service Bus settings of message pump '{name}' are invalid ({ex.ParamName}): {ex.Message}");
            }
        }
    }
}
