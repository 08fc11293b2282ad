using Npgsql;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Support;

/// <summary>The PostgreSQL server the tests run against: the Npgsql connection string in <c>PRIORITYASYNC_POSTGRES</c>.</summary>
internal static class PostgresServer
{
    public const string Variable = "PRIORITYASYNC_POSTGRES";

    public static string? ConnectionString => Environment.GetEnvironmentVariable(Variable) is { Length: > 0 } value ? value : null;

    /// <summary>Gets whether this is a CI run (CI=true), where a missing server is a failure, not a skip.</summary>
    public static bool IsCi => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    public static string SkipReason =>
        $"{Variable} is not set: start a server with `eval \"$(.ci/postgres.sh start)\"` (see docs/postgresql.md, 'Running it') to run the PostgreSQL tests.";

    /// <summary>Returns the connection string, or throws (CI=true without a server must fail, never skip).</summary>
    public static string Require() => ConnectionString
        ?? throw new InvalidOperationException($"CI=true but {Variable} is not set: CI must run the PostgreSQL tests against a server it started (.ci/postgres.sh).");

    /// <summary>Returns a queue name of its own for one test (tests run in parallel).</summary>
    public static string UniqueName(string prefix) => $"{prefix}_{Guid.NewGuid():N}"[..Math.Min(48, prefix.Length + 33)];

    /// <summary>Returns the connection string with its own application name (to find the test's connections on the server).</summary>
    public static string WithApplicationName(string applicationName) =>
        new NpgsqlConnectionStringBuilder(Require()) { ApplicationName = applicationName }.ConnectionString;

    public static PostgreSqlTransport CreateTransport(PostgreSqlTransportOptions? options = null, string? connectionString = null) =>
        new(connectionString ?? Require(), options ?? new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.Zero, PollInterval = TimeSpan.FromMilliseconds(100) });

    /// <summary>Runs one SQL statement outside the transport (for setup and checks) and returns the first column of the first row.</summary>
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
