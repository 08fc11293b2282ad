using System.Diagnostics.CodeAnalysis;
using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;

namespace PriorityAsync.MessagePump.PostgreSql;

/// <summary>
/// The PostgreSQL transport, a lease broker on PostgreSQL: queues in the tables of the <c>priorityasync</c> schema, reached through a pooled
/// <see cref="NpgsqlDataSource"/>. Create it once per process, create or open queues with it, and dispose it last.
/// Thread-safe.
/// </summary>
/// <remarks>
/// Each state change (receive, renew, complete, abandon, dead-letter, send) is one statement under READ COMMITTED;
/// leases are judged on the server's clock and guarded by a fresh lock token per delivery. See <c>docs/postgresql.md</c>.
/// </remarks>
public sealed partial class PostgreSqlTransport : IAsyncDisposable
{
    private readonly NpgsqlDataSource _dataSource;
    private readonly bool _ownsDataSource;
    private readonly NotificationListener _listener;
    private volatile bool _migrated;
    private volatile bool _disposed;

    /// <summary>Creates a transport with its own connection pool.</summary>
    /// <param name="connectionString">An Npgsql connection string, e.g. <c>Host=127.0.0.1;Port=5432;Username=app;Password=...;Database=app</c>.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <exception cref="ArgumentException"><paramref name="connectionString"/> is empty, malformed or names no host, or an option breaks its rule.</exception>
    public PostgreSqlTransport(string connectionString, PostgreSqlTransportOptions? options = null)
        : this(BuildDataSource(connectionString), ownsDataSource: true, options)
    {
    }

    /// <summary>Creates a transport on a data source the caller owns (and disposes after the transport).</summary>
    /// <param name="dataSource">The data source.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <exception cref="ArgumentNullException"><paramref name="dataSource"/> is null.</exception>
    /// <exception cref="ArgumentException">An option breaks its rule.</exception>
    public PostgreSqlTransport(NpgsqlDataSource dataSource, PostgreSqlTransportOptions? options = null)
        : this(dataSource ?? throw new ArgumentNullException(nameof(dataSource)), ownsDataSource: false, options)
    {
    }

    private PostgreSqlTransport(NpgsqlDataSource dataSource, bool ownsDataSource, PostgreSqlTransportOptions? options)
    {
        var copy = (options ?? new PostgreSqlTransportOptions()).Clone();
        try
        {
            copy.Validate();
        }
        catch when (ownsDataSource)
        {
            dataSource.Dispose();
            throw;
        }

        Options = copy;
        _dataSource = dataSource;
        _ownsDataSource = ownsDataSource;
        _listener = new NotificationListener(dataSource);
    }

    /// <summary>Gets the data source the transport runs on.</summary>
    internal NpgsqlDataSource DataSource => _dataSource;

    internal PostgreSqlTransportOptions Options { get; }

    internal NotificationListener Listener => _listener;

    /// <summary>Creates the <c>priorityasync</c> schema and its tables if they are missing. Idempotent; safe from several processes at once.</summary>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the schema exists.</returns>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying.</exception>
    public async Task MigrateAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        try
        {
            var connection = await _dataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
            await using var connectionScope = connection.ConfigureAwait(false);
            var transaction = await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
            await using var transactionScope = transaction.ConfigureAwait(false);
            var command = new NpgsqlCommand(Sql.Schema, connection, transaction);
            await using (command.ConfigureAwait(false))
            {
                await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
            }

            await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
            _migrated = true;
        }
        catch (Exception ex) when (TransportErrors.Translate(ex, "Migrating the priorityasync schema", cancellationToken) is { } translated)
        {
#pragma warning disable MA0027 // not a rethrow: Translate returns a new TransientTransportException with ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }
    }

    /// <summary>Stops the notification listener and, when the transport created it, disposes the data source.</summary>
    /// <returns>A task that completes when the transport is disposed.</returns>
    public async ValueTask DisposeAsync()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        await _listener.DisposeAsync().ConfigureAwait(false);
        if (_ownsDataSource)
        {
            await _dataSource.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <inheritdoc />
    public override string ToString() => "PostgreSqlTransport";

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposed, this);

    private static NpgsqlDataSource BuildDataSource(string connectionString)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(connectionString);
        NpgsqlConnectionStringBuilder builder;
        try
        {
            builder = new NpgsqlConnectionStringBuilder(connectionString);
        }
        catch (Exception ex) when (ex is ArgumentException or FormatException or KeyNotFoundException or InvalidCastException)
        {
            throw new ArgumentException($"The connection string is malformed: {ex.Message}", nameof(connectionString), ex);
        }

        if (string.IsNullOrWhiteSpace(builder.Host))
        {
            throw new ArgumentException("The connection string names no Host.", nameof(connectionString));
        }

        return new NpgsqlDataSourceBuilder(builder.ConnectionString).Build();
    }
}
