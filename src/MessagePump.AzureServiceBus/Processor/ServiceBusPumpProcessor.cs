using System.Diagnostics.CodeAnalysis;
using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using PriorityAsync.MessagePump.Hosting;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// A <see cref="ServiceBusProcessor"/>-shaped consumer on a <see cref="PriorityMessagePump"/>: the same handler events
/// (<see cref="ProcessMessageAsync"/>, <see cref="ProcessErrorAsync"/>), settlement calls and start/stop, while locks are
/// renewed by the pump's lease keeper in the lease lane, ahead of CPU-heavy handlers. Moving a processor consumer over
/// is a change of the line that creates it (see <c>docs/azure-service-bus.md</c>, "Moving from ServiceBusProcessor").
/// </summary>
/// <remarks>
/// <para>
/// A handler that throws gets its message abandoned (unless it settled it) and <see cref="ProcessErrorAsync"/> called with
/// <see cref="ServiceBusErrorSource.ProcessMessageCallback"/>; a lost lock is reported with
/// <see cref="ServiceBusErrorSource.RenewLock"/> (or the settlement's source); a failed receive with
/// <see cref="ServiceBusErrorSource.Receive"/>. An error handler that throws is logged and never stops the processor.
/// </para>
/// <para>
/// <see cref="StopProcessingAsync"/> has the pump's stop semantics: running handlers finish within
/// <see cref="ServiceBusPumpProcessorOptions.ShutdownTimeout"/>, then their tokens are canceled and their messages
/// abandoned: nothing stays locked. Sessions are not handled here; use <see cref="ServiceBusPumpSessionProcessor"/>.
/// </para>
/// </remarks>
public sealed partial class ServiceBusPumpProcessor : IAsyncDisposable, ILeaseKeepingService
{
    private readonly ServiceBusTransport _transport;
    private readonly bool _ownsTransport;
    private readonly ServiceBusEntity _entity;
    private readonly ServiceBusPumpProcessorOptions _options;
    private readonly ILogger _logger;
    private readonly ProcessorHandler _handling;
    private readonly SemaphoreSlim _lifecycle = new(1, 1);
    private readonly Lock _handlersGate = new();
    private Func<ServiceBusPumpMessageEventArgs, Task>? _processMessage;
    private Func<ProcessErrorEventArgs, Task>? _processError;
    private PriorityTaskScheduler? _ownedScheduler;
    private ProcessorRun? _run;
    private MessagePumpStatistics? _lastStatistics;
    private bool _disposed;

    /// <summary>Creates a processor for a queue on a transport the caller owns (and disposes after the processor).</summary>
    /// <param name="transport">The transport.</param>
    /// <param name="queueName">The queue's name.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <exception cref="ArgumentNullException"><paramref name="transport"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="queueName"/> is empty, or an option breaks its rule (the exception names it).</exception>
    public ServiceBusPumpProcessor(ServiceBusTransport transport, string queueName, ServiceBusPumpProcessorOptions? options = null)
        : this(transport ?? throw new ArgumentNullException(nameof(transport)), ownsTransport: false, ServiceBusEntity.Queue(queueName), options)
    {
    }

    /// <summary>Creates a processor for a topic subscription on a transport the caller owns (and disposes after the processor).</summary>
    /// <param name="transport">The transport.</param>
    /// <param name="topicName">The topic's name.</param>
    /// <param name="subscriptionName">The subscription's name.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <exception cref="ArgumentNullException"><paramref name="transport"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="topicName"/> or <paramref name="subscriptionName"/> is empty, or an option breaks its rule.</exception>
    public ServiceBusPumpProcessor(ServiceBusTransport transport, string topicName, string subscriptionName, ServiceBusPumpProcessorOptions? options = null)
        : this(transport ?? throw new ArgumentNullException(nameof(transport)), ownsTransport: false, ServiceBusEntity.Subscription(topicName, subscriptionName), options)
    {
    }

    /// <summary>Creates a processor for a queue or a subscription on a client the caller owns: see <see cref="ServiceBusClientPumpExtensions"/>.</summary>
    internal ServiceBusPumpProcessor(ServiceBusClient client, ServiceBusEntity entity, ServiceBusPumpProcessorOptions? options)
        : this(new ServiceBusTransport(client), ownsTransport: true, entity, options)
    {
    }

    private ServiceBusPumpProcessor(ServiceBusTransport transport, bool ownsTransport, ServiceBusEntity entity, ServiceBusPumpProcessorOptions? options)
    {
        options = (options ?? new ServiceBusPumpProcessorOptions()).Clone();
        options.Validate();
        _transport = transport;
        _ownsTransport = ownsTransport;
        _entity = entity;
        EntityPath = options.SubQueue switch
        {
            SubQueue.DeadLetter => entity.Path + "/$DeadLetterQueue",
            SubQueue.TransferDeadLetter => entity.Path + "/$Transfer/$DeadLetterQueue",
            _ => entity.Path,
        };
        if (string.IsNullOrEmpty(options.Identifier))
        {
            options.Identifier = $"{entity.Path}-{Guid.NewGuid()}"; // ServiceBusProcessor's default
        }

        _options = options;
        _logger = options.Logger ?? NullLogger.Instance;
        _handling = new ProcessorHandler(EntityPath, FullyQualifiedNamespace, options.Identifier, options.AutoCompleteMessages, options.MaxAutoLockRenewalDuration, _logger);
    }

    /// <summary>
    /// Handles each message. Required before <see cref="StartProcessingAsync"/>; one handler at most; not changed while processing.
    /// </summary>
    /// <exception cref="ArgumentNullException">The handler is null.</exception>
    /// <exception cref="NotSupportedException">A handler is already set (adding), or the one given is not it (removing).</exception>
    /// <exception cref="InvalidOperationException">The processor is processing.</exception>
    [SuppressMessage("Design", "MA0046:Use EventHandler<T> to declare events", Justification = "Shaped like ServiceBusProcessor's event of the same name (Func<args, Task>), so that a processor's handlers move over unchanged.")]
    [SuppressMessage("Usage", "VSTHRD200:Use \"Async\" suffix for async methods", Justification = "The name of ServiceBusProcessor's event, kept so that a processor's handlers move over unchanged.")]
    public event Func<ServiceBusPumpMessageEventArgs, Task> ProcessMessageAsync
    {
        add => SetHandler(ref _processMessage, value, nameof(ProcessMessageAsync));
        remove => RemoveHandler(ref _processMessage, value, nameof(ProcessMessageAsync));
    }

    /// <summary>
    /// Handles errors: handler failures, lost locks, failed settlements and receives. Required before <see cref="StartProcessingAsync"/>;
    /// one handler at most; not changed while processing. An exception it throws is logged and goes no further.
    /// </summary>
    /// <exception cref="ArgumentNullException">The handler is null.</exception>
    /// <exception cref="NotSupportedException">A handler is already set (adding), or the one given is not it (removing).</exception>
    /// <exception cref="InvalidOperationException">The processor is processing.</exception>
    [SuppressMessage("Design", "MA0046:Use EventHandler<T> to declare events", Justification = "Shaped like ServiceBusProcessor's event of the same name (Func<args, Task>), so that a processor's handlers move over unchanged.")]
    [SuppressMessage("Usage", "VSTHRD200:Use \"Async\" suffix for async methods", Justification = "The name of ServiceBusProcessor's event, kept so that a processor's handlers move over unchanged.")]
    public event Func<ProcessErrorEventArgs, Task> ProcessErrorAsync
    {
        add => SetHandler(ref _processError, value, nameof(ProcessErrorAsync));
        remove => RemoveHandler(ref _processError, value, nameof(ProcessErrorAsync));
    }

    /// <summary>Gets whether the processor is processing: started and not stopped.</summary>
    public bool IsProcessing => Volatile.Read(ref _run) is not null;

    /// <summary>
    /// Gets the path of the queue or subscription: <c>queue</c>, or <c>topic/Subscriptions/subscription</c>; with
    /// <see cref="ServiceBusPumpProcessorOptions.SubQueue"/>, the sub-queue's (<c>queue/$DeadLetterQueue</c>, <c>queue/$Transfer/$DeadLetterQueue</c>), as the SDK's.
    /// </summary>
    public string EntityPath { get; }

    /// <summary>Gets the namespace's host name.</summary>
    public string FullyQualifiedNamespace => _transport.Client.FullyQualifiedNamespace;

    /// <summary>Gets the processor's identifier: <see cref="ServiceBusPumpProcessorOptions.Identifier"/>, or by default the entity path, a dash and a GUID of its own.</summary>
    public string Identifier => _options.Identifier!;

    /// <inheritdoc />
    /// <remarks>None: the keeper of the pump now processing is judged through the pump.</remarks>
    IReadOnlyList<LeaseKeeper> ILeaseKeepingService.LeaseKeepers => [];

    /// <inheritdoc />
    /// <remarks>The pump now processing: the lease health check (<c>AddLeaseHealthCheck</c>) judges its leases and receives.</remarks>
    IReadOnlyList<PriorityMessagePump> ILeaseKeepingService.MessagePumps => Volatile.Read(ref _run) is { } run ? [run.Pump] : [];

    /// <summary>
    /// Gets the counts of the pump now processing, or of the last run once stopped (received, completed, leases lost ...);
    /// <see langword="null"/> before the first start.
    /// </summary>
    /// <returns>The statistics, or <see langword="null"/>.</returns>
    public MessagePumpStatistics? GetStatistics() => Volatile.Read(ref _run)?.Pump.GetStatistics() ?? Volatile.Read(ref _lastStatistics);

    /// <summary>
    /// Changes <see cref="ServiceBusPumpProcessorOptions.MaxConcurrentCalls"/> now, as the SDK's <c>UpdateConcurrency</c>: the
    /// running pump's <see cref="PriorityMessagePump.MaxInFlight"/>, and the value of every later start. A higher value
    /// lets the pump receive more at once; a lower one receives nothing more until fewer messages than the new value are
    /// held. Running handlers are not touched.
    /// </summary>
    /// <param name="maxConcurrentCalls">The new value; at least 1.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrentCalls"/> is zero or negative.</exception>
    /// <exception cref="ObjectDisposedException">The processor was disposed.</exception>
    public void UpdateConcurrency(int maxConcurrentCalls)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxConcurrentCalls);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed), this);
        lock (_handlersGate)
        {
            // Under the gate the start publishes its run under: a start under way reads the new value when it publishes.
            _options.MaxConcurrentCalls = maxConcurrentCalls;
            _run?.Pump.UpdateMaxInFlight(maxConcurrentCalls);
        }
    }

    /// <summary>
    /// Receives the deferred messages with these sequence numbers now (the broker locks them; see
    /// <see cref="ServiceBusReceiver.ReceiveDeferredMessagesAsync"/>) and hands them to <see cref="ProcessMessageAsync"/>
    /// like any other message: before the next messages of the entity, as the pump has room, renewed, settled and counted
    /// as the others. Does not wait for them to be handled, so a handler may call it.
    /// </summary>
    /// <param name="sequenceNumbers">The sequence numbers of messages deferred on this processor's entity (<see cref="ServiceBusPumpMessageEventArgs.DeferMessageAsync"/>); at least one.</param>
    /// <param name="cancellationToken">Cancels the receive.</param>
    /// <returns>A task that completes when the messages are received and queued for the handler.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="sequenceNumbers"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="sequenceNumbers"/> is empty.</exception>
    /// <exception cref="InvalidOperationException">The processor is not processing.</exception>
    /// <exception cref="ServiceBusException">The broker refused the receive: <see cref="ServiceBusFailureReason.MessageNotFound"/> when one of them is not a deferred message of the entity (then none is received).</exception>
    /// <remarks>
    /// A received message's lock runs from the receive: the pump renews it once it has taken it, which is at once while
    /// it has room (<see cref="ServiceBusPumpProcessorOptions.MaxConcurrentCalls"/>: a receive waiting for the entity's
    /// messages, or the pause after an empty one, ends for them) and otherwise when a handler ends.
    /// Messages not yet taken when the processor stops are abandoned: they stay deferred.
    /// </remarks>
    public async Task ProcessDeferredMessagesAsync(IEnumerable<long> sequenceNumbers, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(sequenceNumbers);
        long[] numbers = [.. sequenceNumbers];
        if (numbers.Length == 0)
        {
            throw new ArgumentException("At least one sequence number is needed.", nameof(sequenceNumbers));
        }

        var run = Volatile.Read(ref _run) ?? throw new InvalidOperationException($"{this} is not processing: start it before receiving deferred messages for its handler.");
        await run.Source.ReceiveDeferredAsync(numbers, cancellationToken).ConfigureAwait(false);

        // Handed over at once: the source has cut short the receive it had under way, and the pump's pause after an
        // empty receive ends now, so no receive wait stands in front of messages whose locks already run.
        run.Pump.WakeReceive();
    }

    /// <inheritdoc />
    public override string ToString() => $"ServiceBusPumpProcessor '{Identifier}' of the {_entity}";

    private void SetHandler<T>(ref T? field, T value, string name)
        where T : Delegate =>
        ProcessorEvents.Set(_handlersGate, ref field, value, nameof(ServiceBusPumpProcessor), name, () => IsProcessing);

    private void RemoveHandler<T>(ref T? field, T value, string name)
        where T : Delegate =>
        ProcessorEvents.Remove(_handlersGate, ref field, value, nameof(ServiceBusPumpProcessor), name, () => IsProcessing);

    /// <summary>The pump's handler: the shared handling (<see cref="ProcessorHandler"/>) with this processor's arguments.</summary>
    private Task HandleAsync(MessageContext context, Lane leaseLane, Func<ServiceBusPumpMessageEventArgs, Task> process, Func<ProcessErrorEventArgs, Task> error) =>
        _handling.HandleAsync(context, (leased, token) => new ServiceBusPumpMessageEventArgs(context, leased, leaseLane, EntityPath, FullyQualifiedNamespace, token), process, error);

    private Task ReportAsync(Func<ProcessErrorEventArgs, Task> error, Exception exception, ServiceBusErrorSource errorSource) =>
        _handling.ReportAsync(error, exception, errorSource);

    /// <summary>One run, from start to stop: the pump runs once, so a restart makes a new one.</summary>
    private sealed record ProcessorRun(ServiceBusMessageSource Source, PriorityMessagePump Pump);
}
