namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// A source that tells <see cref="ServiceBusPumpProcessor"/>'s error handler about each failed receive (once per attempt:
/// a missing entity's backoff waits inside the next receive, not in a failure), then lets the failure go on to the pump
/// (which logs it and pauses); everything else is passed through unchanged.
/// </summary>
internal sealed class ErrorReportingSource : IMessageSource
{
    private readonly IMessageSource _inner;
    private readonly Func<Exception, Task> _report;

    public ErrorReportingSource(IMessageSource inner, Func<Exception, Task> report)
    {
        _inner = inner;
        _report = report;
    }

    public TimeSpan? LockDuration => _inner.LockDuration;

    public bool CompletesBatchesNatively => _inner.CompletesBatchesNatively;

    public bool RenewsBatchesNatively => _inner.RenewsBatchesNatively;

    public string MessagingSystem => _inner.MessagingSystem;

    public string? DestinationName => _inner.DestinationName;

    public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            return await _inner.ReceiveAsync(cancellationToken).ConfigureAwait(true);
        }
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested)
        {
            await _report(ex).ConfigureAwait(true);
            throw;
        }
    }

    public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        try
        {
            return await _inner.ReceiveBatchAsync(maxMessages, cancellationToken).ConfigureAwait(true);
        }
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested)
        {
            await _report(ex).ConfigureAwait(true);
            throw;
        }
    }

    public Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default) =>
        _inner.CompleteBatchAsync(messages, cancellationToken);

    public Task<IReadOnlyList<LeaseRenewal>> RenewBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default) =>
        _inner.RenewBatchAsync(messages, cancellationToken);
}
