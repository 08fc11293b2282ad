using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;

namespace PriorityAsync.MessagePump.AzureServiceBus;

public sealed partial class ServiceBusPumpProcessor
{
    /// <summary>
    /// Opens the receiver and starts the pump: messages are received, handled and settled until <see cref="StopProcessingAsync"/>.
    /// A stopped processor can be started again.
    /// </summary>
    /// <param name="cancellationToken">Cancels opening the receiver.</param>
    /// <returns>A task that completes when the pump has started.</returns>
    /// <exception cref="InvalidOperationException"><see cref="ProcessMessageAsync"/> or <see cref="ProcessErrorAsync"/> has no handler, or the processor is already processing.</exception>
    /// <exception cref="ArgumentException">The entity's properties were read (<see cref="ServiceBusTransportOptions.ReadEntityProperties"/>) and it does not exist, or requires sessions.</exception>
    /// <exception cref="ObjectDisposedException">The processor was disposed.</exception>
    public async Task StartProcessingAsync(CancellationToken cancellationToken = default)
    {
        await _lifecycle.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            Func<ServiceBusPumpMessageEventArgs, Task> process;
            Func<ProcessErrorEventArgs, Task> error;
            lock (_handlersGate)
            {
                if (_run is not null)
                {
                    throw new InvalidOperationException($"{this} is already processing; stop it before starting it again.");
                }

                process = _processMessage ?? throw new InvalidOperationException($"{this} has no ProcessMessageAsync handler: add one (processor.ProcessMessageAsync += args => ...) before StartProcessingAsync.");
                error = _processError ?? throw new InvalidOperationException($"{this} has no ProcessErrorAsync handler: add one (processor.ProcessErrorAsync += args => ...) before StartProcessingAsync; errors would otherwise go unseen.");
            }

            var source = await _transport.OpenAsync(_entity, _options.SourceOptions(), cancellationToken).ConfigureAwait(false);
            try
            {
                var scheduler = _options.Scheduler ?? (_ownedScheduler ??= new PriorityTaskScheduler());
                var pumpOptions = _options.PumpOptions();
                var leaseLane = scheduler.GetLane(pumpOptions.LeaseLane); // the pump's: a handler's own renewals run there
                var pump = new PriorityMessagePump(
                    new ErrorReportingSource(source, ex => ReportAsync(error, ServiceBusErrors.Original(ex), ServiceBusErrorSource.Receive)),
                    (context, _) => HandleAsync(context, leaseLane, process, error),
                    scheduler,
                    pumpOptions,
                    _logger);
                await pump.StartAsync(CancellationToken.None).ConfigureAwait(false);
                lock (_handlersGate)
                {
                    pump.UpdateMaxInFlight(_options.MaxConcurrentCalls); // an UpdateConcurrency made while the pump started
                    _run = new ProcessorRun(source, pump);
                }
            }
            catch
            {
                await source.DisposeAsync().ConfigureAwait(false);
                throw;
            }
        }
        finally
        {
            _lifecycle.Release();
        }
    }

    /// <summary>
    /// Stops receiving, lets running handlers finish within <see cref="ServiceBusPumpProcessorOptions.ShutdownTimeout"/>,
    /// then cancels their tokens and abandons their messages, and closes the receiver: nothing stays locked. Does
    /// nothing when the processor is not processing.
    /// </summary>
    /// <param name="cancellationToken">Ends the wait for running handlers early: their messages are abandoned at once.</param>
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
            _ownedScheduler?.Dispose();
            if (_ownsTransport)
            {
                await _transport.DisposeAsync().ConfigureAwait(false);
            }
        }
        finally
        {
            _lifecycle.Release();
        }
    }

    private async Task StopCoreAsync(CancellationToken cancellationToken)
    {
        if (_run is not { } run)
        {
            return;
        }

        try
        {
            await run.Pump.StopAsync(cancellationToken).ConfigureAwait(false);
            Volatile.Write(ref _lastStatistics, run.Pump.GetStatistics());
            await run.Pump.DisposeAsync().ConfigureAwait(false);
        }
        finally
        {
            await run.Source.DisposeAsync().ConfigureAwait(false);
            lock (_handlersGate)
            {
                _run = null;
            }
        }
    }
}
