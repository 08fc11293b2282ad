using Microsoft.Azure.Amqp.Encoding;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>The vendor names of the Service Bus AMQP dialect the broker speaks.</summary>
internal static class ServiceBusSymbols
{
    public const string CbsAddress = "$cbs";
    public const string ManagementSuffix = "/$management";
    public static readonly AmqpSymbol SessionFilter = "com.microsoft:session-filter";
    public static readonly AmqpSymbol LockedUntilUtc = "com.microsoft:locked-until-utc";
    public static readonly AmqpSymbol Timeout = "com.microsoft:timeout";
    public static readonly AmqpSymbol DeadLetter = "com.microsoft:dead-letter";
    public static readonly AmqpSymbol MessageLockLost = "com.microsoft:message-lock-lost";
    public static readonly AmqpSymbol SessionLockLost = "com.microsoft:session-lock-lost";
    public static readonly AmqpSymbol SessionCannotBeLocked = "com.microsoft:session-cannot-be-locked";
    public static readonly AmqpSymbol ServerBusy = "com.microsoft:server-busy";
    public static readonly AmqpSymbol EntityNotFound = "amqp:not-found";
    public static readonly AmqpSymbol NotAllowed = "amqp:not-allowed";
    public static readonly AmqpSymbol NotImplemented = "amqp:not-implemented";
    public static readonly AmqpSymbol DetachForced = "amqp:link:detach-forced";
    public static readonly AmqpSymbol ArgumentError = "com.microsoft:argument-error";
}
