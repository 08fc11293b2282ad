using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump.AzureServiceBus.Internal;

/// <summary>
/// The process-wide guard that keeps a session's messages out of two handlers at once across acceptances: the one
/// message of a session (keyed by namespace, entity and session id) that is out in this process, whichever source
/// accepted it. A session re-accepted (by this source or another one in the process, after its lock was lost) delivers
/// only once the handler of its earlier acceptance's message has ended: the broker has moved the session on, but that
/// handler may still run.
/// </summary>
internal static class SessionHandlers
{
    private static readonly Lock Gate = new();
    private static readonly Dictionary<(string Namespace, string Entity, string SessionId), Occupant> Busy = [];

    /// <summary>Whether a message of the session is out in this process; <paramref name="ended"/> completes when it ends.</summary>
    public static bool IsBusy(string fullyQualifiedNamespace, ServiceBusEntity entity, string sessionId, [NotNullWhen(true)] out Task? ended)
    {
        lock (Gate)
        {
            ended = Busy.TryGetValue((fullyQualifiedNamespace, entity.Path, sessionId), out var occupant) ? occupant.Ended.Task : null;
            return ended is not null;
        }
    }

    /// <summary>Records <paramref name="message"/> as the session's message out in this process; <see cref="Leave"/> ends it.</summary>
    public static void Enter(string fullyQualifiedNamespace, ServiceBusEntity entity, string sessionId, object message)
    {
        lock (Gate)
        {
            var key = (fullyQualifiedNamespace, entity.Path, sessionId);
            Debug.Assert(!Busy.ContainsKey(key), "A session's message is handed out only when none of it is out in this process (checked before the receive; the broker locks the session to one acceptance).");
            Busy[key] = new Occupant(message);
        }
    }

    /// <summary>Ends <paramref name="message"/>'s occupancy of its session (only its own: a later message's is left alone).</summary>
    public static void Leave(string fullyQualifiedNamespace, ServiceBusEntity entity, string sessionId, object message)
    {
        TaskCompletionSource? ended = null;
        lock (Gate)
        {
            var key = (fullyQualifiedNamespace, entity.Path, sessionId);
            if (Busy.TryGetValue(key, out var occupant) && ReferenceEquals(occupant.Message, message))
            {
                Busy.Remove(key);
                ended = occupant.Ended;
            }
        }

        ended?.TrySetResult();
    }

    private sealed class Occupant(object message)
    {
        public object Message { get; } = message;

        public TaskCompletionSource Ended { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
