using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Encoding;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

internal sealed partial class ManagementNode
{
    private AmqpMessage GetSessionState(ServiceBusTestQueue queue, AmqpMap? body)
    {
        var sessionId = SessionOf(body);
        var (held, state) = _broker.Operate(_ => queue.HeldSessionLocked(sessionId) is { } session ? (true, session.State) : (false, null));
        return held
            ? Answer(200, "OK", new AmqpMap { [SessionState] = state is null ? null! : new ArraySegment<byte>(state) })
            : Answer(410, $"The session lock of '{sessionId}' has expired or the session was released.", null, ServiceBusSymbols.SessionLockLost);
    }

    private AmqpMessage SetSessionState(ServiceBusTestQueue queue, AmqpMap? body)
    {
        var sessionId = SessionOf(body);
        var state = body![SessionState] switch
        {
            ArraySegment<byte> segment => segment.AsSpan().ToArray(),
            byte[] bytes => bytes,
            _ => null,
        };
        var held = _broker.Operate(_ =>
        {
            if (queue.HeldSessionLocked(sessionId) is not { } session)
            {
                return false;
            }

            session.State = state;
            return true;
        });
        return held
            ? Answer(200, "OK", null)
            : Answer(410, $"The session lock of '{sessionId}' has expired or the session was released.", null, ServiceBusSymbols.SessionLockLost);
    }
}
