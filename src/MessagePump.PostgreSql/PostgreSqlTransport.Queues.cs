using System.Diagnostics.CodeAnalysis;
using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;

namespace PriorityAsync.MessagePump.PostgreSql;

public sealed partial class PostgreSqlTransport
{
    /// <summary>
    /// Creates the queue <paramref name="name"/> (migrating the schema first if needed), or updates its settings if it
    /// exists. Idempotent.
    /// </summary>
    /// <param name="name">The queue's name: 1 to 48 lower-case letters, digits and underscores, not starting with a digit.</param>
    /// <param name="options">The queue's settings; <see langword="null"/> for the defaults. Validated here.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The queue.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> breaks the naming rule, or an option breaks its rule.</exception>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying.</exception>
    [SuppressMessage("Usage", "VSTHRD103:Call async methods when in an async method", Justification = "The reader is opened without SequentialAccess, so ReadAsync has buffered the whole row: the getters only decode memory and never wait on the network (as GetInt32/GetString, which have no async form, already do).")]
    public async Task<PostgreSqlQueue> CreateQueueAsync(string name, PostgreSqlQueueOptions? options = null, CancellationToken cancellationToken = default)
    {
        QueueName.Validate(name, nameof(name));
        options ??= new PostgreSqlQueueOptions();
        options.Validate();
        ThrowIfDisposed();
        if (!_migrated)
        {
            await MigrateAsync(cancellationToken).ConfigureAwait(false);
        }

        return await ExecuteAsync(
            $"Creating queue '{name}'",
            Sql.UpsertQueue,
            command =>
            {
                command.Parameters.Add(new NpgsqlParameter<string>("name", name));
                command.Parameters.Add(new NpgsqlParameter<long>("lock_us", options.LockDuration.Ticks / TimeSpan.TicksPerMicrosecond));
                command.Parameters.Add(new NpgsqlParameter<int>("max", options.MaxDeliveryCount));
            },
            async (reader, ct) =>
            {
                await reader.ReadAsync(ct).ConfigureAwait(false);
                return new PostgreSqlQueue(this, name, reader.GetFieldValue<TimeSpan>(0), reader.GetInt32(1));
            },
            cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Opens the existing queue <paramref name="name"/> and reads its settings.</summary>
    /// <param name="name">The queue's name.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The queue.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> breaks the naming rule, or the database has no such queue.</exception>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying.</exception>
    [SuppressMessage("Usage", "VSTHRD103:Call async methods when in an async method", Justification = "The reader is opened without SequentialAccess, so ReadAsync has buffered the whole row: the getters only decode memory and never wait on the network (as GetInt32/GetString, which have no async form, already do).")]
    public async Task<PostgreSqlQueue> GetQueueAsync(string name, CancellationToken cancellationToken = default)
    {
        QueueName.Validate(name, nameof(name));
        ThrowIfDisposed();
        PostgreSqlQueue? queue;
        try
        {
            queue = await ExecuteAsync(
                $"Opening queue '{name}'",
                Sql.GetQueue,
                command => command.Parameters.Add(new NpgsqlParameter<string>("name", name)),
                async (reader, ct) => await reader.ReadAsync(ct).ConfigureAwait(false)
                    ? new PostgreSqlQueue(this, name, reader.GetFieldValue<TimeSpan>(0), reader.GetInt32(1))
                    : null,
                cancellationToken).ConfigureAwait(false);
        }
        catch (PostgresException ex) when (ex.SqlState is PostgresErrorCodes.UndefinedTable or PostgresErrorCodes.InvalidSchemaName)
        {
            throw new ArgumentException($"The database has no queue named '{name}': the priorityasync schema does not exist yet (create the queue with CreateQueueAsync).", nameof(name), ex);
        }

        return queue ?? throw new ArgumentException($"The database has no queue named '{name}' (create it with CreateQueueAsync).", nameof(name));
    }

    /// <summary>Deletes the queue <paramref name="name"/> with its messages and dead letters. Does nothing if it does not exist.</summary>
    /// <param name="name">The queue's name.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>Whether a queue was deleted.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> breaks the naming rule.</exception>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying.</exception>
    public async Task<bool> DeleteQueueAsync(string name, CancellationToken cancellationToken = default)
    {
        QueueName.Validate(name, nameof(name));
        ThrowIfDisposed();
        var rows = await ExecuteNonQueryAsync(
            $"Deleting queue '{name}'",
            Sql.DeleteQueue,
            command => command.Parameters.Add(new NpgsqlParameter<string>("name", name)),
            cancellationToken).ConfigureAwait(false);
        return rows > 0;
    }
}
