using System.Net.Sockets;
using Npgsql;

namespace PriorityAsync.MessagePump.PostgreSql.Internal;

/// <summary>Maps Npgsql failures onto the transport's exceptions.</summary>
internal static class TransportErrors
{
    /// <summary>
    /// Returns whether <paramref name="exception"/> is worth retrying: connection loss or a broken connection,
    /// a server shutting down (57P01, 57P02, 57P03), a serialization failure (40001), a deadlock (40P01), too many
    /// connections (53300), a connection exception (class 08), a timeout, or anything Npgsql marks transient.
    /// </summary>
    public static bool IsTransient(Exception exception) => exception switch
    {
        PostgresException pg => pg.IsTransient
            || pg.SqlState is "57P01" or "57P02" or "57P03" or "40001" or "40P01" or "53300"
            || pg.SqlState.StartsWith("08", StringComparison.Ordinal),
        NpgsqlException npgsql => npgsql.IsTransient
            || npgsql.InnerException is IOException or SocketException or TimeoutException or EndOfStreamException,
        TimeoutException or IOException or SocketException => true,
        _ => false,
    };

    /// <summary>Wraps a transient failure of <paramref name="operation"/>; returns the exception to throw, or null to rethrow.</summary>
    public static Exception? Translate(Exception exception, string operation, CancellationToken cancellationToken)
    {
        if (exception is OperationCanceledException || cancellationToken.IsCancellationRequested)
        {
            return null;
        }

        return IsTransient(exception)
            ? new TransientTransportException($"{operation} failed transiently ({exception.GetType().Name}: {exception.Message}); it may be retried.", exception)
            : null;
    }
}
