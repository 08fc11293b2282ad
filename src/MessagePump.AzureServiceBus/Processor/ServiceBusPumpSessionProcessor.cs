using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;
using PriorityAsync.MessagePump.Hosting;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// A <see cref="ServiceBusSessionProcessor"/>-shaped consumer on a <see cref="PriorityMessagePump"/> over the pump's
/// multi-session source: up to <see cref="ServiceBusPumpSessionProcessorOptions.MaxConcurrentSessions"/> sessions held at
/// once, each delivered in order to one handler at a time, every held session's lock renewed by the pump in the lease
/// lane (whether or not a message of it is out), and a session never in two handlers of this process at once (also
/// across acceptances and processors). The events and calls are the SDK's: <see cref="ProcessMessageAsync"/> with the
/// session's state and <see cref="ServiceBusPumpSessionMessageEventArgs.ReleaseSession"/>, <see cref="ProcessErrorAsync"/>,
/// <see cref="SessionInitializingAsync"/> and <see cref="SessionClosingAsync"/>.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="SessionInitializingAsync"/> runs once per acceptance of a session, before its first message reaches a
/// handler; <see cref="SessionClosingAsync"/> once per acceptance that was initialized, after the last handler of that
/// acceptance has ended and before the session is released (its state can still be read and set). A session is closed
/// when it had no message for <see cref="ServiceBusPumpSessionProcessorOptions.SessionIdleTimeout"/>, when a handler
/// released it, when its lock was lost, and at stop. An initializing handler that throws is reported
/// (<see cref="ServiceBusErrorSource.AcceptSession"/>) and the session is released without a closing event.
/// </para>
/// <para>
/// Handler failures, lost locks, failed settlements and receives are reported as by <see cref="ServiceBusPumpProcessor"/>;
/// <see cref="StopProcessingAsync"/> has its stop semantics (handlers finish within
/// <see cref="ServiceBusPumpSessionProcessorOptions.ShutdownTimeout"/>, then are canceled and their messages abandoned),
/// then closes the held sessions (raising <see cref="SessionClosingAsync"/>): nothing stays locked. A session is never
/// closed while a handler of it runs: a session whose canceled handler is still running when the pump has stopped
/// stays held (its lock kept in the lease lane) and is closed — <see cref="SessionClosingAsync"/>, then its release —
/// once that handler has ended, after the stop has returned; the processor's own scheduler and transport are disposed
/// after it too. A handler that never ends keeps its session held.
/// </para>
/// </remarks>
public sealed class ServiceBusPumpSessionProcessor : IAsyncDisposable, ILeaseKeepingService
{
    private readonly ServiceBusTransport _transport;
    private readonly bool _ownsTransport;
    private readonly ServiceBusEntity _entity;
    private readonly ServiceBusPumpSessionProcessorOptions _options;
    private readonly ILogger _logger;
    private readonly ProcessorHandler _handling;
    private readonly SemaphoreSlim _lifecycle = new(1, 1);
    private readonly Lock _handlersGate = new();
    private Func<ServiceBusPumpSessionMessageEventArgs, Task>? _processMessage;
    private Func<ProcessErrorEventArgs, Task>? _processError;
    private Func<ServiceBusPumpSessionEventArgs, Task>? _sessionInitializing;
    private Func<ServiceBusPumpSessionEventArgs, Task>? _sessionClosing;
    private PriorityTaskScheduler? _ownedScheduler;
    private SessionRun? _run;
    private MessagePumpStatistics? _lastStatistics;
    private Task _closingLater = Task.CompletedTask; // the sessions stopped runs close once their last handler ends
    private bool _disposed;

    /// <summary>Creates a session processor for a session-enabled queue on a transport the caller owns (and disposes after the processor).</summary>
    /// <param name="transport">The transport.</param>
    /// <param name="queueName">The queue's name.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <exception cref="ArgumentNullException"><paramref name="transport"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="queueName"/> is empty, or an option breaks its rule (the exception names it).</exception>
    public ServiceBusPumpSessionProcessor(ServiceBusTransport transport, string queueName, ServiceBusPumpSessionProcessorOptions? options = null)
        : this(transport ?? throw new ArgumentNullException(nameof(transport)), ownsTransport: false, ServiceBusEntity.Queue(queueName), options)
    {
    }

    /// <summary>Creates a session processor for a session-enabled topic subscription on a transport the caller owns (and disposes after the processor).</summary>
    /// <param name="transport">The transport.</param>
    /// <param name="topicName">The topic's name.</param>
    /// <param name="subscriptionName">The subscription's name.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <exception cref="ArgumentNullException"><paramref name="transport"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="topicName"/> or <paramref name="subscriptionName"/> is empty, or an option breaks its rule.</exception>
    public ServiceBusPumpSessionProcessor(ServiceBusTransport transport, string topicName, string subscriptionName, ServiceBusPumpSessionProcessorOptions? options = null)
        : this(transport ?? throw new ArgumentNullException(nameof(transport)), ownsTransport: false, ServiceBusEntity.Subscription(topicName, subscriptionName), options)
    {
    }

    /// <summary>Creates a session processor on a client the caller owns: see <see cref="ServiceBusClientPumpExtensions"/>.</summary>
    internal ServiceBusPumpSessionProcessor(ServiceBusClient client, ServiceBusEntity entity, ServiceBusPumpSessionProcessorOptions? options)
        : this(new ServiceBusTransport(client), ownsTransport: true, entity, options)
    {
    }

    private ServiceBusPumpSessionProcessor(ServiceBusTransport transport, bool ownsTransport, ServiceBusEntity entity, ServiceBusPumpSessionProcessorOptions? options)
    {
        options = (options ?? new ServiceBusPumpSessionProcessorOptions()).Clone();
        options.Validate();
        _transport = transport;
        _ownsTransport = ownsTransport;
        _entity = entity;
        EntityPath = entity.Path;
        if (string.IsNullOrEmpty(options.Identifier))
        {
            options.Identifier = $"{entity.Path}-{Guid.NewGuid()}"; // ServiceBusSessionProcessor's default
        }

        _options = options;
        _logger = options.Logger ?? NullLogger.Instance;
        _handling = new ProcessorHandler(EntityPath, FullyQualifiedNamespace, options.Identifier, options.AutoCompleteMessages, options.MaxAutoLockRenewalDuration, _logger);
    }

    /// <summary>Handles each message, one at a time per session, in order. Required before <see cref="StartProcessingAsync"/>; one handler at most; not changed while processing.</summary>
    /// <exception cref="ArgumentNullException">The handler is null.</exception>
    /// <exception cref="NotSupportedException">A handler is already set (adding), or the one given is not it (removing).</exception>
    /// <exception cref="InvalidOperationException">The processor is processing.</exception>
    [SuppressMessage("Design", "MA0046:Use EventHandler<T> to declare events", Justification = "Shaped like ServiceBusSessionProcessor's event of the same name (Func<args, Task>), so that its handlers move over unchanged.")]
    [SuppressMessage("Usage", "VSTHRD200:Use \"Async\" suffix for async methods", Justification = "The name of ServiceBusSessionProcessor's event.")]
    public event Func<ServiceBusPumpSessionMessageEventArgs, Task> ProcessMessageAsync
    {
        add => Set(ref _processMessage, value, nameof(ProcessMessageAsync));
        remove => Remove(ref _processMessage, value, nameof(ProcessMessageAsync));
    }

    /// <summary>Handles errors: handler failures, lost locks, failed settlements, receives and session events. Required before <see cref="StartProcessingAsync"/>; an exception it throws is logged and goes no further.</summary>
    /// <exception cref="ArgumentNullException">The handler is null.</exception>
    /// <exception cref="NotSupportedException">A handler is already set (adding), or the one given is not it (removing).</exception>
    /// <exception cref="InvalidOperationException">The processor is processing.</exception>
    [SuppressMessage("Design", "MA0046:Use EventHandler<T> to declare events", Justification = "Shaped like ServiceBusSessionProcessor's event of the same name.")]
    [SuppressMessage("Usage", "VSTHRD200:Use \"Async\" suffix for async methods", Justification = "The name of ServiceBusSessionProcessor's event.")]
    public event Func<ProcessErrorEventArgs, Task> ProcessErrorAsync
    {
        add => Set(ref _processError, value, nameof(ProcessErrorAsync));
        remove => Remove(ref _processError, value, nameof(ProcessErrorAsync));
    }

    /// <summary>Runs once per acceptance of a session, before its first message reaches a handler. Optional; not changed while processing.</summary>
    /// <exception cref="ArgumentNullException">The handler is null.</exception>
    /// <exception cref="NotSupportedException">A handler is already set (adding), or the one given is not it (removing).</exception>
    /// <exception cref="InvalidOperationException">The processor is processing.</exception>
    [SuppressMessage("Design", "MA0046:Use EventHandler<T> to declare events", Justification = "Shaped like ServiceBusSessionProcessor's event of the same name.")]
    [SuppressMessage("Usage", "VSTHRD200:Use \"Async\" suffix for async methods", Justification = "The name of ServiceBusSessionProcessor's event.")]
    public event Func<ServiceBusPumpSessionEventArgs, Task> SessionInitializingAsync
    {
        add => Set(ref _sessionInitializing, value, nameof(SessionInitializingAsync));
        remove => Remove(ref _sessionInitializing, value, nameof(SessionInitializingAsync));
    }

    /// <summary>Runs once per initialized acceptance of a session, after its last handler ended and before the session is released. Optional; not changed while processing.</summary>
    /// <exception cref="ArgumentNullException">The handler is null.</exception>
    /// <exception cref="NotSupportedException">A handler is already set (adding), or the one given is not it (removing).</exception>
    /// <exception cref="InvalidOperationException">The processor is processing.</exception>
    [SuppressMessage("Design", "MA0046:Use EventHandler<T> to declare events", Justification = "Shaped like ServiceBusSessionProcessor's event of the same name.")]
    [SuppressMessage("Usage", "VSTHRD200:Use \"Async\" suffix for async methods", Justification = "The name of ServiceBusSessionProcessor's event.")]
    public event Func<ServiceBusPumpSessionEventArgs, Task> SessionClosingAsync
    {
        add => Set(ref _sessionClosing, value, nameof(SessionClosingAsync));
        remove => Remove(ref _sessionClosing, value, nameof(SessionClosingAsync));
    }

    /// <summary>Gets whether the processor is processing: started and not stopped.</summary>
    public bool IsProcessing => Volatile.Read(ref _run) is not null;

    /// <summary>Gets the path of the queue or subscription: <c>queue</c>, or <c>topic/Subscriptions/subscription</c>.</summary>
    public string EntityPath { get; }

    /// <summary>Gets the namespace's host name.</summary>
    public string FullyQualifiedNamespace => _transport.Client.FullyQualifiedNamespace;

    /// <summary>Gets the processor's identifier: <see cref="ServiceBusPumpSessionProcessorOptions.Identifier"/>, or by default the entity path, a dash and a GUID of its own.</summary>
    public string Identifier => _options.Identifier!;

    /// <inheritdoc />
    /// <remarks>
    /// The keeper of the run now processing that keeps every held session's lock; the lease health check
    /// (<c>AddLeaseHealthCheck</c>) judges it beside the run's pump (the messages out).
    /// </remarks>
    IReadOnlyList<LeaseKeeper> ILeaseKeepingService.LeaseKeepers => Volatile.Read(ref _run) is { } run ? [run.Keeper] : [];

    /// <inheritdoc />
    /// <remarks>The pump now processing: the lease health check judges its leases and receives (an accept that fails is one).</remarks>
    IReadOnlyList<PriorityMessagePump> ILeaseKeepingService.MessagePumps => Volatile.Read(ref _run)?.Pump is { } pump ? [pump] : [];

    /// <summary>
    /// Gets the counts of the pump now processing, or of the last run once stopped, as <see cref="ServiceBusPumpProcessor.GetStatistics"/>
    /// does: the messages of every session held (received, completed, leases lost — a session lock lost while one of its
    /// messages is out loses that message's lease —, the lock time left at hand-off ...); <see langword="null"/> before
    /// the first start.
    /// </summary>
    /// <returns>The statistics, or <see langword="null"/>.</returns>
    public MessagePumpStatistics? GetStatistics() => Volatile.Read(ref _run)?.Pump?.GetStatistics() ?? Volatile.Read(ref _lastStatistics);

    /// <summary>
    /// Opens the multi-session source and starts the pump: sessions are accepted, their messages handled and settled,
    /// until <see cref="StopProcessingAsync"/>. A stopped processor can be started again.
    /// </summary>
    /// <param name="cancellationToken">Cancels opening the source.</param>
    /// <returns>A task that completes when the pump has started.</returns>
    /// <exception cref="InvalidOperationException"><see cref="ProcessMessageAsync"/> or <see cref="ProcessErrorAsync"/> has no handler, or the processor is already processing.</exception>
    /// <exception cref="ArgumentException">The entity's properties were read and it does not exist, or does not require sessions.</exception>
    /// <exception cref="ObjectDisposedException">The processor was disposed.</exception>
    public async Task StartProcessingAsync(CancellationToken cancellationToken = default)
    {
        await _lifecycle.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            Func<ServiceBusPumpSessionMessageEventArgs, Task> process;
            Func<ProcessErrorEventArgs, Task> error;
            Func<ServiceBusPumpSessionEventArgs, Task>? initializing;
            Func<ServiceBusPumpSessionEventArgs, Task>? closing;
            lock (_handlersGate)
            {
                if (_run is not null)
                {
                    throw new InvalidOperationException($"{this} is already processing; stop it before starting it again.");
                }

                process = _processMessage ?? throw new InvalidOperationException($"{this} has no ProcessMessageAsync handler: add one (processor.ProcessMessageAsync += args => ...) before StartProcessingAsync.");
                error = _processError ?? throw new InvalidOperationException($"{this} has no ProcessErrorAsync handler: add one (processor.ProcessErrorAsync += args => ...) before StartProcessingAsync; errors would otherwise go unseen.");
                initializing = _sessionInitializing;
                closing = _sessionClosing;
            }

            var source = await _transport.OpenSessionsAsync(_entity, _options.MaxConcurrentSessions, _options.SourceOptions(), cancellationToken).ConfigureAwait(false);
            var scheduler = _options.Scheduler ?? (_ownedScheduler ??= new PriorityTaskScheduler());

            // One keeper for every held session's lock, in the lease lane of the pump's scheduler; it outlives the
            // source, so that a session whose handler outlasts the stop stays kept until it is closed.
            var run = new SessionRun(source, new LeaseKeeper(scheduler, new LeaseKeeperOptions { Name = $"{Identifier}-session-locks" }, _logger));
            source.SessionKeeper = run.Keeper;
            source.SessionIds = _options.SessionIds.Count > 0 ? [.. _options.SessionIds] : null;
            source.SessionIdleTimeout = _options.SessionIdleTimeout;
            source.SessionOpening = session => OpenAsync(run, session, initializing, error);
            source.SessionClosing = session => CloseAsync(run, session, closing, error);
            try
            {
                run.Pump = new PriorityMessagePump(
                    new ErrorReportingSource(source, ex => _handling.ReportAsync(error, ServiceBusErrors.Original(ex), ServiceBusErrorSource.Receive)),
                    (context, _) => HandleAsync(run, context, process, error),
                    scheduler,
                    _options.PumpOptions(),
                    _logger);
                await run.Pump.StartAsync(CancellationToken.None).ConfigureAwait(false);
                lock (_handlersGate)
                {
                    _run = run;
                }
            }
            catch
            {
                await source.DisposeAsync().ConfigureAwait(false);
                await run.Keeper.DisposeAsync().ConfigureAwait(false);
                run.Dispose();
                throw;
            }
        }
        finally
        {
            _lifecycle.Release();
        }
    }

    /// <summary>
    /// Stops receiving, lets running handlers finish within <see cref="ServiceBusPumpSessionProcessorOptions.ShutdownTimeout"/>,
    /// then cancels their tokens and abandons their messages, and closes the held sessions (raising
    /// <see cref="SessionClosingAsync"/> for each): nothing stays locked. A session whose handler is still running then
    /// (it ignored its canceled token) is closed once that handler ends, after this call has returned: the stop keeps
    /// its timeout, and a session is never released while its handler runs. Does nothing when the processor is not processing.
    /// </summary>
    /// <param name="cancellationToken">Ends the wait for running handlers early: their messages are abandoned at once, and the closing handlers' token is canceled.</param>
    /// <returns>A task that completes when the processor has stopped.</returns>
    public async Task StopProcessingAsync(CancellationToken cancellationToken = default)
    {
        await _lifecycle.WaitAsync(CancellationToken.None).ConfigureAwait(false);
        try
        {
            await StopCoreAsync(cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _lifecycle.Release();
        }
    }

    /// <summary>Stops processing (see <see cref="StopProcessingAsync"/>), then disposes what the processor created: its scheduler, and the transport made from a client.</summary>
    /// <returns>A task that completes when the processor is disposed.</returns>
    public async ValueTask DisposeAsync()
    {
        await _lifecycle.WaitAsync(CancellationToken.None).ConfigureAwait(false);
        try
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            await StopCoreAsync(CancellationToken.None).ConfigureAwait(false);
            if (_closingLater.IsCompleted)
            {
                await DisposeOwnedAsync().ConfigureAwait(false);
            }
            else
            {
                // A session whose handler outlasted the stop is still held and kept, on the scheduler and the
                // transport: they go once it is closed.
                _ = DisposeOwnedAsync();
            }
        }
        finally
        {
            _lifecycle.Release();
        }
    }

    /// <inheritdoc />
    public override string ToString() => $"ServiceBusPumpSessionProcessor '{Identifier}' of the {_entity}";

    private async Task StopCoreAsync(CancellationToken cancellationToken)
    {
        if (_run is not { } run)
        {
            return;
        }

        using var stopNow = cancellationToken.Register(run.Stopping.Cancel);
        try
        {
            await run.Pump!.StopAsync(cancellationToken).ConfigureAwait(false);
            Volatile.Write(ref _lastStatistics, run.Pump.GetStatistics());
            run.PumpStopped.TrySetResult(); // a handler still running ignored its canceled token: its session is closed when it ends
            await run.Pump.DisposeAsync().ConfigureAwait(false);
        }
        finally
        {
            await run.Source.DisposeAsync().ConfigureAwait(false); // closes the held sessions, raising SessionClosingAsync
            lock (_handlersGate)
            {
                _run = null;
            }

            var closedLater = run.ClosedLaterAsync();
            if (closedLater.IsCompleted)
            {
                await run.Keeper.DisposeAsync().ConfigureAwait(false);
                run.Dispose();
            }
            else
            {
                _closingLater = Task.WhenAll(_closingLater, EndAfterAsync(run, closedLater));
            }
        }
    }

    /// <summary>Ends a stopped run once the sessions it closes after their last handler are closed: their lock's keeper stops then.</summary>
    private static async Task EndAfterAsync(SessionRun run, Task closedLater)
    {
#pragma warning disable VSTHRD003 // the run's own closings, started by CloseAsync
        await closedLater.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
#pragma warning restore VSTHRD003
        await run.Keeper.DisposeAsync().ConfigureAwait(false);
        run.Dispose();
    }

    /// <summary>Disposes what the processor created once the sessions still closing after their handlers are closed.</summary>
    private async Task DisposeOwnedAsync()
    {
#pragma warning disable VSTHRD003 // the processor's own closings
        await _closingLater.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
#pragma warning restore VSTHRD003
        _ownedScheduler?.Dispose();
        if (_ownsTransport)
        {
            await _transport.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>The pump's handler: the shared handling with the session's arguments, counted against the session's acceptance.</summary>
    private async Task HandleAsync(SessionRun run, MessageContext context, Func<ServiceBusPumpSessionMessageEventArgs, Task> process, Func<ProcessErrorEventArgs, Task> error)
    {
        var leased = (ServiceBusLeasedMessage)context.Message;
        Debug.Assert(leased.SessionLock is not null, "The multi-session source hands out messages of sessions only.");
        if (!run.Enter(leased.SessionLock!, out var acceptance))
        {
            // The acceptance was closed (its lock lost) before this handler could start: the message comes back with
            // the session, and SessionClosingAsync has run for this acceptance already.
            return;
        }

        try
        {
            await _handling.HandleAsync(
                context,
                (message, token) => new ServiceBusPumpSessionMessageEventArgs(context, message, acceptance.Source, run.Pump!.LeaseLane, EntityPath, FullyQualifiedNamespace, token),
                process,
                error).ConfigureAwait(true);
        }
        finally
        {
            run.Exit(acceptance);
        }
    }

    /// <summary>The source's hook for a session just accepted: records the acceptance, then raises <see cref="SessionInitializingAsync"/>.</summary>
    private async Task OpenAsync(SessionRun run, ServiceBusSessionMessageSource session, Func<ServiceBusPumpSessionEventArgs, Task>? initializing, Func<ProcessErrorEventArgs, Task> error)
    {
        run.Opened(session);
        if (initializing is null)
        {
            return;
        }

        try
        {
            await initializing(new ServiceBusPumpSessionEventArgs(session, EntityPath, FullyQualifiedNamespace, run.Stopping.Token)).ConfigureAwait(false);
        }
        catch (Exception ex)
        {
            run.Forget(session);
            await _handling.ReportAsync(error, ex, ServiceBusErrorSource.AcceptSession).ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>
    /// The source's hook for a session about to be released: waits for the acceptance's last handler, then raises
    /// <see cref="SessionClosingAsync"/>. When the pump stops first (a handler outlasted the shutdown timeout, its token
    /// canceled), the session is taken over (<see cref="ServiceBusSessionMessageSource.ClosedByOwner"/>): still held,
    /// its lock still kept, it is closed — the event raised, then the receiver closed — once that handler has ended.
    /// </summary>
    private async Task CloseAsync(SessionRun run, ServiceBusSessionMessageSource session, Func<ServiceBusPumpSessionEventArgs, Task>? closing, Func<ProcessErrorEventArgs, Task> error)
    {
        if (!run.TryClose(session, out var handlersEnded))
        {
            return; // never opened (its initializing failed), or closed already
        }

        if (!handlersEnded.IsCompleted)
        {
#pragma warning disable VSTHRD003 // the run's own TaskCompletionSources (RunContinuationsAsynchronously), completed by the last handler's Exit and the stop
            await Task.WhenAny(handlersEnded, run.PumpStopped.Task).ConfigureAwait(false);
#pragma warning restore VSTHRD003
            if (!handlersEnded.IsCompleted)
            {
                session.ClosedByOwner = true;
                run.CloseLater(CloseAfterHandlersAsync(run, session, handlersEnded, closing, error));
                return;
            }
        }

        await RaiseClosingAsync(run, session, closing, error).ConfigureAwait(false);
    }

    /// <summary>Closes a session taken over at the stop once its last handler has ended: <see cref="SessionClosingAsync"/>, then its receiver.</summary>
    private async Task CloseAfterHandlersAsync(SessionRun run, ServiceBusSessionMessageSource session, Task handlersEnded, Func<ServiceBusPumpSessionEventArgs, Task>? closing, Func<ProcessErrorEventArgs, Task> error)
    {
#pragma warning disable VSTHRD003 // the run's own TaskCompletionSource, completed by the last handler's Exit
        await handlersEnded.ConfigureAwait(false);
#pragma warning restore VSTHRD003
        await RaiseClosingAsync(run, session, closing, error).ConfigureAwait(false);
        await session.DisposeAsync().ConfigureAwait(false);
    }

    private async Task RaiseClosingAsync(SessionRun run, ServiceBusSessionMessageSource session, Func<ServiceBusPumpSessionEventArgs, Task>? closing, Func<ProcessErrorEventArgs, Task> error)
    {
        if (closing is null)
        {
            return;
        }

        try
        {
            await closing(new ServiceBusPumpSessionEventArgs(session, EntityPath, FullyQualifiedNamespace, run.Stopping.Token)).ConfigureAwait(false);
        }
        catch (Exception ex)
        {
            await _handling.ReportAsync(error, ex, ServiceBusErrorSource.CloseSession).ConfigureAwait(false);
        }
    }

    private void Set<T>(ref T? field, T value, string name)
        where T : Delegate =>
        ProcessorEvents.Set(_handlersGate, ref field, value, nameof(ServiceBusPumpSessionProcessor), name, () => IsProcessing);

    private void Remove<T>(ref T? field, T value, string name)
        where T : Delegate =>
        ProcessorEvents.Remove(_handlersGate, ref field, value, nameof(ServiceBusPumpSessionProcessor), name, () => IsProcessing);

    /// <summary>One acceptance of a session: its source, the handlers of it running, and whether it is closing.</summary>
    private sealed class Acceptance(ServiceBusSessionMessageSource source)
    {
        public ServiceBusSessionMessageSource Source { get; } = source;

        public int Running { get; set; }

        public TaskCompletionSource? HandlersEnded { get; set; }
    }

    /// <summary>One run, from start to stop: the source, the pump, and the acceptances open now.</summary>
    private sealed class SessionRun(ServiceBusMultiSessionSource source, LeaseKeeper keeper) : IDisposable
    {
        private readonly Lock _gate = new();
        private readonly Dictionary<SessionLock, Acceptance> _open = [];
        private readonly List<Task> _closedLater = [];

        public ServiceBusMultiSessionSource Source { get; } = source;

        /// <summary>Keeps every held session's lock, from its accept until it is closed (past the stop, for a session closed later).</summary>
        public LeaseKeeper Keeper { get; } = keeper;

        /// <summary>Completed once the pump has stopped: a session whose handler still runs is then closed when it ends.</summary>
        public TaskCompletionSource PumpStopped { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void CloseLater(Task closing)
        {
            lock (_gate)
            {
                _closedLater.Add(closing);
            }
        }

        /// <summary>A task that completes when every session taken over at the stop is closed.</summary>
        public Task ClosedLaterAsync()
        {
            lock (_gate)
            {
                return Task.WhenAll(_closedLater);
            }
        }

        public PriorityMessagePump? Pump { get; set; }

        /// <summary>Canceled when the stop waits no longer (its token): the session events' token.</summary>
        public CancellationTokenSource Stopping { get; } = new();


        public void Opened(ServiceBusSessionMessageSource session)
        {
            lock (_gate)
            {
                _open.Add(session.Lock, new Acceptance(session));
            }
        }

        public void Forget(ServiceBusSessionMessageSource session)
        {
            lock (_gate)
            {
                _open.Remove(session.Lock);
            }
        }

        /// <summary>Counts a handler of the message's acceptance; false when that acceptance is closing or closed.</summary>
        public bool Enter(SessionLock sessionLock, [NotNullWhen(true)] out Acceptance? acceptance)
        {
            lock (_gate)
            {
                if (!_open.TryGetValue(sessionLock, out acceptance))
                {
                    return false;
                }

                acceptance.Running++;
                return true;
            }
        }

        public void Exit(Acceptance acceptance)
        {
            TaskCompletionSource? ended = null;
            lock (_gate)
            {
                Debug.Assert(acceptance.Running > 0, "Exit follows Enter.");
                if (--acceptance.Running == 0)
                {
                    ended = acceptance.HandlersEnded;
                }
            }

            ended?.TrySetResult();
        }

        /// <summary>Closes the acceptance to new handlers, with a task that completes when its running handlers have ended; false when it was not open.</summary>
        public bool TryClose(ServiceBusSessionMessageSource session, [NotNullWhen(true)] out Task? handlersEnded)
        {
            lock (_gate)
            {
                if (!_open.Remove(session.Lock, out var acceptance))
                {
                    handlersEnded = null;
                    return false;
                }

                if (acceptance.Running == 0)
                {
                    handlersEnded = Task.CompletedTask;
                    return true;
                }

                acceptance.HandlersEnded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                handlersEnded = acceptance.HandlersEnded.Task;
                return true;
            }
        }

        public void Dispose()
        {
            Stopping.Dispose();
        }
    }
}
