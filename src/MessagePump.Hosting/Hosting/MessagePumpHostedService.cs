using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.MessagePump.Hosting;

/// <summary>
/// Runs a <see cref="PriorityMessagePump"/> for the lifetime of a host: the host's start starts the pump, the host's stop stops
/// it gracefully (the host's shutdown token ends the wait for messages in flight).
/// </summary>
/// <remarks>
/// The pump runs on the <see cref="PriorityScheduler"/> given (for example one registered in the container); without
/// one the service creates a <see cref="PriorityTaskScheduler"/> with default options and disposes it with itself.
/// </remarks>
public sealed class MessagePumpHostedService : IHostedService, IAsyncDisposable, ILeaseKeepingService
{
    private readonly PriorityTaskScheduler? _ownedScheduler;
    private int _disposed;

    /// <summary>Creates the service and its pump.</summary>
    /// <param name="source">The queue to consume.</param>
    /// <param name="handler">Processes one message.</param>
    /// <param name="options">The pump's options; validated here.</param>
    /// <param name="scheduler">The scheduler to run on; <see langword="null"/> to create and own one.</param>
    /// <param name="loggerFactory">Creates the pump's logger; <see langword="null"/> for none.</param>
    /// <exception cref="ArgumentNullException"><paramref name="source"/> or <paramref name="handler"/> is null.</exception>
    /// <exception cref="ArgumentException">An option breaks its rule; the exception names it.</exception>
    internal MessagePumpHostedService(
        IMessageSource source,
        Func<MessageContext, CancellationToken, Task> handler,
        MessagePumpOptions? options = null,
        PriorityScheduler? scheduler = null,
        ILoggerFactory? loggerFactory = null)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(handler);
        options ??= new MessagePumpOptions();
        options.Validate(source.LockDuration, scheduler);
        if (scheduler is null)
        {
            _ownedScheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { Name = options.Name });
            scheduler = _ownedScheduler;
        }

        Pump = new PriorityMessagePump(source, handler, scheduler, options, loggerFactory?.CreateLogger<PriorityMessagePump>());
    }

    /// <summary>Gets the pump.</summary>
    public PriorityMessagePump Pump { get; }

    /// <inheritdoc />
    /// <remarks>None: the pump's own keeper is judged through the pump.</remarks>
    IReadOnlyList<LeaseKeeper> ILeaseKeepingService.LeaseKeepers => [];

    /// <inheritdoc />
    IReadOnlyList<PriorityMessagePump> ILeaseKeepingService.MessagePumps => [Pump];

    /// <inheritdoc />
    public Task StartAsync(CancellationToken cancellationToken) => Pump.StartAsync(cancellationToken);

    /// <inheritdoc />
    public Task StopAsync(CancellationToken cancellationToken) => Pump.StopAsync(cancellationToken);

    /// <summary>Stops the pump and disposes the scheduler the service created, if any. Calls after the first do nothing.</summary>
    /// <returns>A task that completes when both are done.</returns>
    public async ValueTask DisposeAsync()
    {
        // AddMessagePump registers the service twice (keyed, and as an IHostedService): the container disposes it twice.
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await Pump.DisposeAsync().ConfigureAwait(false);
        if (_ownedScheduler is not null)
        {
            await _ownedScheduler.DisposeAsync().ConfigureAwait(false);
        }
    }
}
