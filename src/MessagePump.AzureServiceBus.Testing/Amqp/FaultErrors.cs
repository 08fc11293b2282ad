using Microsoft.Azure.Amqp.Encoding;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>The error condition, status code and text each <see cref="ServiceBusTestFault"/> is answered with.</summary>
internal static class FaultErrors
{
    public static (AmqpSymbol Condition, string Description) For(ServiceBusTestFault fault, bool session) => fault switch
    {
        ServiceBusTestFault.LockLost => session
            ? (ServiceBusSymbols.SessionLockLost, "The session lock has expired (injected by ServiceBusTestFaults).")
            : (ServiceBusSymbols.MessageLockLost, "The lock supplied is invalid (injected by ServiceBusTestFaults)."),
        ServiceBusTestFault.ServerBusy => (ServiceBusSymbols.ServerBusy, "The server is busy (injected by ServiceBusTestFaults)."),
        _ => (ServiceBusSymbols.Timeout, "The operation timed out (injected by ServiceBusTestFaults)."),
    };

    /// <summary>The <c>rejected</c> outcome a transfer (a send, or a settlement over the receive link) that <paramref name="fault"/> failed is answered with.</summary>
    public static Rejected RejectedOutcome(ServiceBusTestFault fault, bool session)
    {
        var (condition, description) = For(fault, session);
        return new Rejected { Error = new Error { Condition = condition, Description = description } };
    }

    public static int StatusCode(ServiceBusTestFault fault) => fault switch
    {
        ServiceBusTestFault.LockLost => 410,
        ServiceBusTestFault.ServerBusy => 503,
        _ => 408,
    };
}
