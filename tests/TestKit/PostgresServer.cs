using Npgsql;
using PriorityAsync.MessagePump.PostgreSql;

namespace PriorityAsync.TestKit;

/// <summary>The PostgreSQL server the tests run against: the Npgsql connection string in <c>PRIORITYASYNC_POSTGRES</c>.</summary>
public static class PostgresServer
{
    /// <summary>The environment variable holding the connection string.</summary>
    public const string Variable = "PRIORITYASYNC_POSTGRES";

    /// <summary>Gets the connection string, or <see langword="null"/> when <see cref="Variable"/> is not set.</summary>
    public static string? ConnectionString => Environment.GetEnvironmentVariable(Variable) is { Length: > 0 } value ? value : null;

    /// <summary>Gets whether this is a CI run (CI=true), where a missing server is a failure, not a skip.</summary>
    public static bool IsCi => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    /// <summary>Gets the reason given when a PostgreSQL test is skipped.</summary>
    public static string SkipReason =>
        $"{Variable} is not set: start a server with `eval \"$(.ci/postgres.sh start)\"` (see docs/postgresql.md, 'Running it') to run the PostgreSQL tests.";

    /// <summary>Returns the connection string, or throws (CI=true without a server must fail, never skip).</summary>
    /// <returns>The connection string.</returns>
    public static string Require() => ConnectionString
        ?? throw new InvalidOperationException($"CI=true but {Variable} is not set: CI must run the PostgreSQL tests against a server it started (.ci/postgres.sh).");

    /// <summary>Returns a queue name of its own for one test (tests run in parallel).</summary>
    /// <param name="prefix">The start of the name.</param>
    /// <returns>The name, at most 48 characters.</returns>
    public static string UniqueName(string prefix) => $"{prefix}_{Guid.NewGuid():N}"[..Math.Min(48, prefix.Length + 33)];

    /// <summary>Returns the connection string with its own application name (to find the test's connections on the server).</summary>
    /// <param name="applicationName">The application name.</param>
    /// <returns>The connection string.</returns>
    public static string WithApplicationName(string applicationName) =>
        new NpgsqlConnectionStringBuilder(Require()) { ApplicationName = applicationName }.ConnectionString;

    /// <summary>Creates a transport on the server (no receive wait, 100 ms polls, unless <paramref name="options"/> are given).</summary>
    /// <param name="options">The transport's options.</param>
    /// <param name="connectionString">The connection string; <see cref="Require"/>'s when <see langword="null"/>.</param>
    /// <returns>The transport.</returns>
    public static PostgreSqlTransport CreateTransport(PostgreSqlTransportOptions? options = null, string? connectionString = null) =>
        new(connectionString ?? Require(), options ?? new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.Zero, PollInterval = TimeSpan.FromMilliseconds(100) });

    /// <summary>Runs one SQL statement outside the transport (for setup and checks) and returns the first column of the first row.</summary>
    /// <param name="sql">The statement.</param>
    /// <param name="parameters">Its parameters.</param>
    /// <returns>The first column of the first row.</returns>
    public static async Task<object?> ScalarAsync(string sql, params (string Name, object Value)[] parameters)
    {
        await using var dataSource = NpgsqlDataSource.Create(Require());
        await using var command = dataSource.CreateCommand(sql);
        foreach (var (name, value) in parameters)
        {
            command.Parameters.AddWithValue(name, value);
        }

        return await command.ExecuteScalarAsync();
    }
}
