using Microsoft.Extensions.Logging;

namespace PriorityAsync.MessagePump;

/// <summary>The pump's log messages; event ids are stable and listed in docs/message-pump.md.</summary>
internal static partial class MessagePumpLog
{
    [LoggerMessage(1, LogLevel.Information, "Message pump {Pump} started on {Scheduler}: at most {MaxInFlight} messages in flight.")]
    public static partial void Started(ILogger logger, string pump, string scheduler, int maxInFlight);

    [LoggerMessage(2, LogLevel.Information, "Message pump {Pump} is stopping: {InFlight} messages in flight, shutdown timeout {Timeout}.")]
    public static partial void Stopping(ILogger logger, string pump, int inFlight, TimeSpan timeout);

    [LoggerMessage(3, LogLevel.Information, "Message pump {Pump} stopped: {Received} received, {Completed} completed, {Abandoned} abandoned, {DeadLettered} dead-lettered, {LeasesLost} leases lost.")]
    public static partial void Stopped(ILogger logger, string pump, long received, long completed, long abandoned, long deadLettered, long leasesLost);

    [LoggerMessage(10, LogLevel.Debug, "Message pump {Pump} received {MessageId} (delivery {DeliveryCount}), locked until {LockedUntil:O}.")]
    public static partial void Received(ILogger logger, string pump, string messageId, int deliveryCount, DateTimeOffset lockedUntil);

    [LoggerMessage(11, LogLevel.Debug, "Message pump {Pump} completed {MessageId}.")]
    public static partial void Completed(ILogger logger, string pump, string messageId);

    [LoggerMessage(12, LogLevel.Warning, "Message pump {Pump}: the handler failed on {MessageId} (delivery {DeliveryCount}); the message is abandoned for redelivery.")]
    public static partial void HandlerFailed(ILogger logger, Exception exception, string pump, string messageId, int deliveryCount);

    [LoggerMessage(13, LogLevel.Debug, "Message pump {Pump} abandoned {MessageId}.")]
    public static partial void Abandoned(ILogger logger, string pump, string messageId);

    [LoggerMessage(14, LogLevel.Warning, "Message pump {Pump} dead-lettered {MessageId}: {Reason}.")]
    public static partial void DeadLettered(ILogger logger, string pump, string messageId, string reason);

    [LoggerMessage(15, LogLevel.Debug, "Message pump {Pump} deferred {MessageId}.")]
    public static partial void Deferred(ILogger logger, string pump, string messageId);

    [LoggerMessage(16, LogLevel.Warning, "Message pump {Pump}: the broker accepted the {Operation} of {MessageId} but cannot confirm it took effect; the message may be delivered again.")]
    public static partial void SettledUnconfirmed(ILogger logger, string pump, string operation, string messageId);

    [LoggerMessage(20, LogLevel.Trace, "Message pump {Pump} renewed {MessageId} with {Slack} of lock left.")]
    public static partial void Renewed(ILogger logger, string pump, string messageId, TimeSpan slack);

    [LoggerMessage(21, LogLevel.Warning, "Message pump {Pump}: {Operation} of {MessageId} failed transiently; retrying in {Delay}.")]
    public static partial void TransientFailure(ILogger logger, Exception exception, string pump, string operation, string messageId, TimeSpan delay);

    [LoggerMessage(22, LogLevel.Error, "Message pump {Pump} lost the lease of {MessageId} during {Operation}; the handler is canceled and the broker will deliver the message again.")]
    public static partial void LeaseLost(ILogger logger, Exception? exception, string pump, string messageId, string operation);

    [LoggerMessage(23, LogLevel.Error, "Message pump {Pump} failed to {Operation} {MessageId}.")]
    public static partial void SettleFailed(ILogger logger, Exception exception, string pump, string operation, string messageId);

    [LoggerMessage(30, LogLevel.Warning, "Message pump {Pump}: {MessageId} did not finish within the shutdown timeout; its handler is canceled and the message abandoned.")]
    public static partial void AbandoningAtStop(ILogger logger, string pump, string messageId);

    [LoggerMessage(32, LogLevel.Warning, "Message pump {Pump} gave up on the settlement of {MessageId} at stop: still unanswered when its lock expired ({LockedUntil}) with renewals stopped; counted as a lost lease, the broker will deliver it again.")]
    public static partial void UnsettledAtStop(ILogger logger, string pump, string messageId, DateTimeOffset lockedUntil);

    [LoggerMessage(31, LogLevel.Error, "Message pump {Pump} failed to receive; retrying in {Delay}.")]
    public static partial void ReceiveFailed(ILogger logger, Exception exception, string pump, TimeSpan delay);

    [LoggerMessage(33, LogLevel.Error, "Message pump {Pump}: the transport broke its contract; the messages it returned are processed.")]
    public static partial void TransportContractBroken(ILogger logger, Exception exception, string pump);

    [LoggerMessage(34, LogLevel.Error, "Message pump {Pump}: the transport's batch renewal broke its contract; the leases it answered wrongly are renewed alone.")]
    public static partial void BatchRenewalBroken(ILogger logger, Exception exception, string pump);

    [LoggerMessage(35, LogLevel.Debug, "Message pump {Pump} sent {Count} hedged renewals: their earlier renewals are still unanswered at the time the rule renews the lease.")]
    public static partial void RenewalsHedged(ILogger logger, string pump, int count);

    [LoggerMessage(36, LogLevel.Warning, "Message pump {Pump}: renewals take {RoundTrip} to act, more than a third of the {LockTime} lock; the keeper renews at half the lock and no more often, and a renewal may reach the broker after the lock ends. Use a longer lock duration.")]
    public static partial void RoundTripsTooSlowForLock(ILogger logger, string pump, TimeSpan roundTrip, TimeSpan lockTime);
}
