using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>The log messages of <see cref="ServiceBusPumpProcessor"/>.</summary>
internal static partial class ProcessorLog
{
    [LoggerMessage(EventId = 2101, Level = LogLevel.Error, Message = "Service Bus processor '{Processor}': its ProcessErrorAsync handler threw while handling an error from {ErrorSource}; the processor goes on.")]
    public static partial void ErrorHandlerFailed(ILogger logger, Exception exception, string processor, ServiceBusErrorSource errorSource);
}
