using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// The handling both processor shapes share (<see cref="ServiceBusPumpProcessor"/>, <see cref="ServiceBusPumpSessionProcessor"/>):
/// runs the user's handler in the processing lane, reports what went wrong to the error handler, and settles what the
/// handler left unsettled (complete, or abandon after a failure or without auto-complete) in the lease lane.
/// Continuations stay in the lane (no <c>ConfigureAwait(false)</c>), as the pump's own.
/// </summary>
internal sealed class ProcessorHandler
{
    private readonly bool _autoComplete;
    private readonly TimeSpan _maxAutoLockRenewalDuration;
    private readonly ILogger _logger;

    public ProcessorHandler(string entityPath, string fullyQualifiedNamespace, string identifier, bool autoComplete, TimeSpan maxAutoLockRenewalDuration, ILogger logger)
    {
        EntityPath = entityPath;
        FullyQualifiedNamespace = fullyQualifiedNamespace;
        Identifier = identifier;
        _autoComplete = autoComplete;
        _maxAutoLockRenewalDuration = maxAutoLockRenewalDuration;
        _logger = logger;
    }

    public string EntityPath { get; }

    public string FullyQualifiedNamespace { get; }

    public string Identifier { get; }

    /// <summary>
    /// Handles one message: <paramref name="createArgs"/> makes the handler's arguments from the context, the message and
    /// the handler's token (the pump's, also canceled at <c>MaxAutoLockRenewalDuration</c>).
    /// </summary>
    public async Task HandleAsync<TArgs>(
        MessageContext context,
        Func<ServiceBusLeasedMessage, CancellationToken, TArgs> createArgs,
        Func<TArgs, Task> process,
        Func<ProcessErrorEventArgs, Task> error)
        where TArgs : ServiceBusPumpMessageEventArgs
    {
        var leased = (ServiceBusLeasedMessage)context.Message;
        using var limit = _maxAutoLockRenewalDuration == Timeout.InfiniteTimeSpan
            ? null
            : new CancellationTokenSource(_maxAutoLockRenewalDuration, context.TimeProvider);
        using var linked = limit is null ? null : CancellationTokenSource.CreateLinkedTokenSource(context.CancellationToken, limit.Token);
        var args = createArgs(leased, linked?.Token ?? context.CancellationToken);
        Exception? failure = null;
        try
        {
            await process(args).ConfigureAwait(true);
        }
        catch (Exception ex)
        {
            failure = ex;
        }

        // A handler canceled by the pump (stop, or a lost lock reported below) is not an error of its own, as with the SDK.
        if (failure is not null && !(failure is OperationCanceledException && context.CancellationToken.IsCancellationRequested))
        {
            context.RecordHandlerFailure(failure); // the pump's statistics count it, as for a bare pump's handler that throws
            await ReportAsync(error, failure, ServiceBusErrorSource.ProcessMessageCallback).ConfigureAwait(true);
        }

        if (context.LeaseState == MessageLeaseState.Lost)
        {
            // Reported once, as RenewLock (the SDK's source for a lock lost while its handler runs), also when the
            // handler caught the MessageLockLost its own settle call threw; only that exception leaving the handler was
            // reported already, as the handler's failure.
            var thrown = args.LockLostThrown;
            if (thrown is null || !IsOrWraps(failure, thrown))
            {
                var lost = thrown ?? ServiceBusPumpMessageEventArgs.LockLost(leased, $"While the handler of message {leased.MessageId} ran", EntityPath, inner: null);
                await ReportAsync(error, lost, ServiceBusErrorSource.RenewLock).ConfigureAwait(true);
            }

            return;
        }

        if (args.IsSettled || context.LeaseState == MessageLeaseState.SettlementClaimed)
        {
            // Settled by the handler, or by the pump's stop path (abandoned after the shutdown wait).
            return;
        }

        var complete = failure is null && _autoComplete;
        try
        {
            await args.SettleAfterHandlerAsync(complete).ConfigureAwait(true);
        }
        catch (ServiceBusException ex)
        {
            await ReportAsync(error, ex, complete ? ServiceBusErrorSource.Complete : ServiceBusErrorSource.Abandon).ConfigureAwait(true);
        }
    }

    /// <summary>Calls the error handler; an exception it throws is logged and goes no further.</summary>
    public async Task ReportAsync(Func<ProcessErrorEventArgs, Task> error, Exception exception, ServiceBusErrorSource errorSource)
    {
        try
        {
            await error(new ProcessErrorEventArgs(exception, errorSource, FullyQualifiedNamespace, EntityPath, Identifier, CancellationToken.None)).ConfigureAwait(true);
        }
        catch (Exception ex)
        {
            ProcessorLog.ErrorHandlerFailed(_logger, ex, Identifier, errorSource);
        }
    }

    /// <summary>Whether <paramref name="failure"/> is <paramref name="exception"/> or carries it as an inner exception.</summary>
    private static bool IsOrWraps(Exception? failure, Exception exception)
    {
        for (var current = failure; current is not null; current = current.InnerException)
        {
            if (ReferenceEquals(current, exception))
            {
                return true;
            }
        }

        return false;
    }
}
