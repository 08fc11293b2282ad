using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.AzureServiceBus;
using PriorityAsync.MessagePump.Hosting;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers hosted <see cref="ServiceBusPumpProcessor"/>s and <see cref="ServiceBusPumpSessionProcessor"/>s: the processors' shape, run by the generic host.</summary>
public static class ServiceBusPumpProcessorServiceCollectionExtensions
{
    /// <summary>
    /// Registers a hosted <see cref="ServiceBusPumpProcessor"/>: the host creates it with <paramref name="create"/>,
    /// lets <paramref name="configure"/> attach its <see cref="ServiceBusPumpProcessor.ProcessMessageAsync"/> and
    /// <see cref="ServiceBusPumpProcessor.ProcessErrorAsync"/> handlers (as a <c>ServiceBusProcessor</c> consumer attaches
    /// them, with services resolved from the provider given), starts it when the host starts and stops it when the host
    /// stops, then disposes it. Call once per processor.
    /// </summary>
    /// <remarks>
    /// The host's stop calls <see cref="ServiceBusPumpProcessor.StopProcessingAsync"/> with the host's stop token:
    /// running handlers get the processor's <see cref="ServiceBusPumpProcessorOptions.ShutdownTimeout"/>, cut short when
    /// the host's own shutdown timeout (<c>HostOptions.ShutdownTimeout</c>, 30 s by default) ends first; then
    /// their tokens are canceled and their messages abandoned, so nothing stays locked. The processor is created when
    /// the host starts (not when the container is built), so a failure to create it fails the host's start. A handler
    /// that needs scoped services creates a scope per message (<see cref="ServiceProviderServiceExtensions.CreateAsyncScope(IServiceProvider)"/>).
    /// </remarks>
    /// <param name="services">The service collection.</param>
    /// <param name="create">Creates the processor, e.g. <c>provider => provider.GetRequiredService&lt;ServiceBusClient&gt;().CreatePumpProcessor("orders", options)</c>.</param>
    /// <param name="configure">Attaches the processor's handlers; it must set both before the processor starts.</param>
    /// <returns>The service collection.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/>, <paramref name="create"/> or <paramref name="configure"/> is null.</exception>
    public static IServiceCollection AddServiceBusPumpProcessor(
        this IServiceCollection services,
        Func<IServiceProvider, ServiceBusPumpProcessor> create,
        Action<IServiceProvider, ServiceBusPumpProcessor> configure)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(create);
        ArgumentNullException.ThrowIfNull(configure);
        return services.AddSingleton<IHostedService>(provider => new HostedProcessor<ServiceBusPumpProcessor>(
            provider, create, configure, nameof(AddServiceBusPumpProcessor), (p, ct) => p.StartProcessingAsync(ct), (p, ct) => p.StopProcessingAsync(ct)));
    }

    /// <summary>
    /// Registers a hosted <see cref="ServiceBusPumpSessionProcessor"/>, as <see cref="AddServiceBusPumpProcessor"/> does a
    /// <see cref="ServiceBusPumpProcessor"/>: created with <paramref name="create"/> when the host starts (bind its
    /// options from configuration there), its handlers attached by <paramref name="configure"/>
    /// (<see cref="ServiceBusPumpSessionProcessor.ProcessMessageAsync"/> and <see cref="ServiceBusPumpSessionProcessor.ProcessErrorAsync"/>
    /// required, the session events optional), started with the host, stopped with it (the held sessions closed, their
    /// closing events raised) and then disposed. Call once per processor.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="create">Creates the processor, e.g. <c>provider => provider.GetRequiredService&lt;ServiceBusClient&gt;().CreatePumpSessionProcessor("orders", options)</c>.</param>
    /// <param name="configure">Attaches the processor's handlers; it must set the message and error handlers before the processor starts.</param>
    /// <returns>The service collection.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/>, <paramref name="create"/> or <paramref name="configure"/> is null.</exception>
    public static IServiceCollection AddServiceBusPumpSessionProcessor(
        this IServiceCollection services,
        Func<IServiceProvider, ServiceBusPumpSessionProcessor> create,
        Action<IServiceProvider, ServiceBusPumpSessionProcessor> configure)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(create);
        ArgumentNullException.ThrowIfNull(configure);
        return services.AddSingleton<IHostedService>(provider => new HostedProcessor<ServiceBusPumpSessionProcessor>(
            provider, create, configure, nameof(AddServiceBusPumpSessionProcessor), (p, ct) => p.StartProcessingAsync(ct), (p, ct) => p.StopProcessingAsync(ct)));
    }

    /// <summary>Runs one processor (of either shape) for the host's lifetime.</summary>
    private sealed class HostedProcessor<TProcessor>(
        IServiceProvider provider,
        Func<IServiceProvider, TProcessor> create,
        Action<IServiceProvider, TProcessor> configure,
        string registration,
        Func<TProcessor, CancellationToken, Task> start,
        Func<TProcessor, CancellationToken, Task> stop) : IHostedService, IAsyncDisposable, ILeaseKeepingService
        where TProcessor : class, IAsyncDisposable, ILeaseKeepingService
    {
        private TProcessor? _processor;

        /// <summary>The processor's keepers, for the lease health check; none before the host started it.</summary>
        public IReadOnlyList<LeaseKeeper> LeaseKeepers => Volatile.Read(ref _processor)?.LeaseKeepers ?? [];

        /// <summary>The processor's pump, for the lease health check; none before the host started it.</summary>
        public IReadOnlyList<PriorityMessagePump> MessagePumps => Volatile.Read(ref _processor)?.MessagePumps ?? [];

        public async Task StartAsync(CancellationToken cancellationToken)
        {
            var processor = create(provider)
                ?? throw new InvalidOperationException($"{registration}: the create delegate returned null; it must return the processor to host.");
            _processor = processor;
            configure(provider, processor);
            await start(processor, cancellationToken).ConfigureAwait(false);
        }

        public Task StopAsync(CancellationToken cancellationToken) =>
            _processor is { } processor ? stop(processor, cancellationToken) : Task.CompletedTask;

        public ValueTask DisposeAsync()
        {
            var processor = _processor;
            _processor = null;
            return processor?.DisposeAsync() ?? ValueTask.CompletedTask;
        }
    }
}
