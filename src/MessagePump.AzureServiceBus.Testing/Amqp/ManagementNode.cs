using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Encoding;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>
/// An entity's $management node: renew-lock, renew-session-lock, update-disposition, get/set-session-state.
/// Answers carry <c>statusCode</c>, <c>statusDescription</c> and, on failure, <c>errorCondition</c>.
/// </summary>
internal sealed partial class ManagementNode
{
    private const string Operation = "operation";
    private const string AssociatedLinkName = "associated-link-name";
    private const string RenewLockOperation = "com.microsoft:renew-lock";
    private const string RenewSessionLockOperation = "com.microsoft:renew-session-lock";
    private const string UpdateDispositionOperation = "com.microsoft:update-disposition";
    private static readonly MapKey LockTokens = new("lock-tokens");
    private static readonly MapKey Expirations = new("expirations");
    private static readonly MapKey Expiration = new("expiration");
    private static readonly MapKey SessionIdKey = new("session-id");
    private static readonly MapKey SessionState = new("session-state");
    private static readonly MapKey DispositionStatus = new("disposition-status");
    private static readonly MapKey DeadLetterReason = new("deadletter-reason");
    private static readonly MapKey DeadLetterDescription = new("deadletter-description");
    private static readonly MapKey FromSequenceNumber = new("from-sequence-number");
    private static readonly MapKey PropertiesToModify = new("properties-to-modify");
    private static readonly MapKey MessageCount = new("message-count");
    private static readonly MapKey Messages = new("messages");
    private static readonly MapKey Message = new("message");
    private static readonly MapKey SequenceNumbers = new("sequence-numbers");
    private static readonly MapKey ReceiverSettleMode = new("receiver-settle-mode");
    private static readonly MapKey LockToken = new("lock-token");
    private static readonly AmqpSymbol MessageNotFound = "com.microsoft:message-not-found";
    private readonly ServiceBusTestBroker _broker;

    public ManagementNode(ServiceBusTestBroker broker) => _broker = broker;

    public async Task<RequestAnswer> HandleAsync(ServiceBusTestQueue queue, AmqpMessage request)
    {
        try
        {
            var operation = request.ApplicationProperties?.Map[Operation] as string;
            var body = request.BodyType == SectionFlag.AmqpValue ? request.ValueBody?.Value as AmqpMap : null;
            if (operation is not RenewLockOperation and not RenewSessionLockOperation and not UpdateDispositionOperation
                && _broker.Faults.Take(ServiceBusTestOperations.Management) is { } fault)
            {
                return FaultAnswer(fault, session: false);
            }

            return operation switch
            {
                RenewLockOperation => await RenewLockAsync(queue, body).ConfigureAwait(false),
                RenewSessionLockOperation => await RenewSessionLockAsync(queue, body, request.ApplicationProperties?.Map[AssociatedLinkName] as string).ConfigureAwait(false),
                UpdateDispositionOperation => UpdateDisposition(queue, body),
                "com.microsoft:get-session-state" => GetSessionState(queue, body),
                "com.microsoft:set-session-state" => SetSessionState(queue, body),
                "com.microsoft:peek-message" => Peek(queue, body),
                "com.microsoft:receive-by-sequence-number" => ReceiveBySequenceNumber(queue, body),
                "com.microsoft:schedule-message" => Schedule(queue, body),
                "com.microsoft:cancel-scheduled-message" => CancelScheduled(queue, body),
                "com.microsoft:add-rule" => AddRule(queue, body),
                "com.microsoft:remove-rule" => RemoveRule(queue, body),
                "com.microsoft:enumerate-rules" => EnumerateRules(queue, body),
                _ => Answer(501, $"The test broker does not implement the operation '{operation}'.", null, ServiceBusSymbols.NotImplemented),
            };
        }
        catch (Exception exception) when (exception is InvalidCastException or KeyNotFoundException or ArgumentException or NullReferenceException)
        {
            return Answer(400, $"The request is malformed: {exception.Message}", null, ServiceBusSymbols.ArgumentError);
        }
    }

    private static AmqpMessage Answer(int statusCode, string description, AmqpMap? body, AmqpSymbol? condition = null)
    {
        var response = body is null ? AmqpMessage.Create() : AmqpMessage.Create(new AmqpValue { Value = body });
        response.ApplicationProperties.Map["statusCode"] = statusCode;
        response.ApplicationProperties.Map["statusDescription"] = description;
        if (condition is { } errorCondition)
        {
            response.ApplicationProperties.Map["errorCondition"] = errorCondition;
        }

        return response;
    }

    private static AmqpMessage FaultAnswer(ServiceBusTestFault fault, bool session)
    {
        var (condition, description) = FaultErrors.For(fault, session);
        return Answer(FaultErrors.StatusCode(fault), description, null, condition);
    }

    private static Guid[] TokensOf(AmqpMap? body) => body?[LockTokens] as Guid[] ?? throw new ArgumentException("lock-tokens is missing.", nameof(body));

    private static string SessionOf(AmqpMap? body) => body?[SessionIdKey] as string ?? throw new ArgumentException("session-id is missing.", nameof(body));

    private async Task DelayRenewalAsync()
    {
        var delay = _broker.Faults.RenewLockDelay;
        if (delay > TimeSpan.Zero)
        {
            await Task.Delay(delay, _broker.TimeProvider).ConfigureAwait(false);
        }
    }

    private async Task<AmqpMessage> RenewLockAsync(ServiceBusTestQueue queue, AmqpMap? body)
    {
        var tokens = TokensOf(body);
        await DelayRenewalAsync().ConfigureAwait(false);
        var fault = _broker.Faults.Take(ServiceBusTestOperations.RenewMessageLock);
        var expirations = _broker.Operate(now =>
        {
            queue.CountRenewLocked();
            if (fault is not null)
            {
                if (fault == ServiceBusTestFault.LockLost)
                {
                    queue.ForfeitLocksLocked(tokens, now);
                }

                return null;
            }

            var renewed = new DateTime[tokens.Length];
            for (var i = 0; i < tokens.Length; i++)
            {
                if (queue.RenewLocked(tokens[i], now) is not { } until)
                {
                    queue.CountRefusedRenewLocked();
                    return null;
                }

                renewed[i] = until.UtcDateTime;
            }

            return renewed;
        });
        if (fault is { } injected)
        {
            return FaultAnswer(injected, session: false);
        }

        if (expirations is null)
        {
            return Answer(410, "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.", null, ServiceBusSymbols.MessageLockLost);
        }

        return Answer(200, "OK", new AmqpMap { [Expirations] = expirations });
    }

    /// <summary>
    /// Renews a session lock. The 7.x client names its receive link (<c>associated-link-name</c>); as on Service Bus, a
    /// renewal from a link that does not hold the session (its lock was lost and another receiver took the session) is
    /// refused with session-lock-lost.
    /// </summary>
    private async Task<RequestAnswer> RenewSessionLockAsync(ServiceBusTestQueue queue, AmqpMap? body, string? associatedLinkName)
    {
        var sessionId = SessionOf(body);
        await DelayRenewalAsync().ConfigureAwait(false);
        var fault = _broker.Faults.Take(ServiceBusTestOperations.RenewSessionLock);
        var until = _broker.Operate(
            now =>
            {
                queue.CountRenewLocked();
                if (fault == ServiceBusTestFault.LockLost)
                {
                    queue.ForfeitSessionLockLocked(sessionId, now);
                }

                if (fault is not null)
                {
                    return null;
                }

                var renewed = queue.RenewSessionLocked(sessionId, associatedLinkName, now);
                if (renewed is null)
                {
                    queue.CountRefusedRenewLocked();
                }

                return renewed;
            },
            out var signalLostSessions);
        if (fault is { } injected)
        {
            return new RequestAnswer(FaultAnswer(injected, session: true), signalLostSessions);
        }

        return new RequestAnswer(
            until is { } lockedUntil
                ? Answer(200, "OK", new AmqpMap { [Expiration] = lockedUntil.UtcDateTime })
                : Answer(410, $"The session lock of '{sessionId}' has expired or the session was released.", null, ServiceBusSymbols.SessionLockLost),
            signalLostSessions);
    }

    private AmqpMessage UpdateDisposition(ServiceBusTestQueue queue, AmqpMap? body)
    {
        var tokens = TokensOf(body);
        var status = body![DispositionStatus] as string;
        var kind = status switch
        {
            "completed" => SettleKind.Complete,
            "abandoned" => SettleKind.Abandon,
            "suspended" => SettleKind.DeadLetter,
            "defered" => SettleKind.Defer,
            _ => throw new ArgumentException($"disposition-status '{status}' is not known.", nameof(body)),
        };
        var reason = body[DeadLetterReason] as string;
        var description = body[DeadLetterDescription] as string;
        var properties = (body[PropertiesToModify] as AmqpMap)?
            .Select(pair => new KeyValuePair<string, object>(pair.Key.Key.ToString()!, pair.Value))
            .Where(pair => pair.Value is not null)
            .ToList();
        if (_broker.Faults.Take(SettleOperations.Of(kind)) is { } fault)
        {
            return FaultAnswer(fault, session: false);
        }

        var result = _broker.Operate(now =>
        {
            foreach (var token in tokens)
            {
                var settled = queue.SettleLocked(null, token, kind, reason, description, now, properties);
                if (settled != SettleResult.Done)
                {
                    return settled;
                }
            }

            return SettleResult.Done;
        });
        return result switch
        {
            SettleResult.Done => Answer(200, "OK", null),
            SettleResult.NotSupported => Answer(501, "The test broker does not support this settlement.", null, ServiceBusSymbols.NotImplemented),
            SettleResult.SessionLockLost => Answer(410, "The session lock has expired or the session was released.", null, ServiceBusSymbols.SessionLockLost),
            _ => Answer(410, "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.", null, ServiceBusSymbols.MessageLockLost),
        };
    }
}
