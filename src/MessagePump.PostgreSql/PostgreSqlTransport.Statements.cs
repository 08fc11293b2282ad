using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;

namespace PriorityAsync.MessagePump.PostgreSql;

public sealed partial class PostgreSqlTransport
{
    /// <summary>Runs one statement and reads its result; transient failures become <see cref="TransientTransportException"/>.</summary>
    internal async Task<T> ExecuteAsync<T>(
        string operation,
        string sql,
        Action<NpgsqlCommand> bind,
        Func<NpgsqlDataReader, CancellationToken, Task<T>> read,
        CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        try
        {
            var command = _dataSource.CreateCommand(sql);
            await using var commandScope = command.ConfigureAwait(false);
            bind(command);
            var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
            await using var readerScope = reader.ConfigureAwait(false);
            return await read(reader, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (TransportErrors.Translate(ex, operation, cancellationToken) is { } translated)
        {
#pragma warning disable MA0027 // not a rethrow: Translate returns a new TransientTransportException with ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }
    }

    /// <summary>Runs one statement and returns the rows it affected; transient failures become <see cref="TransientTransportException"/>.</summary>
    internal async Task<int> ExecuteNonQueryAsync(string operation, string sql, Action<NpgsqlCommand> bind, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        try
        {
            var command = _dataSource.CreateCommand(sql);
            await using var commandScope = command.ConfigureAwait(false);
            bind(command);
            return await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (TransportErrors.Translate(ex, operation, cancellationToken) is { } translated)
        {
#pragma warning disable MA0027 // not a rethrow: Translate returns a new TransientTransportException with ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }
    }
}
