using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;
using PriorityAsync.MessagePump.PostgreSql.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Transport;

/// <summary>
/// The batch complete's plan, in a database of its own whose queue table has the statistics a queue table usually has:
/// analyzed nearly empty after it was big, then filled again (autovacuum off, so nothing refreshes them meanwhile).
/// </summary>
public class BatchPlanTests(ITestOutputHelper output)
{
    [PostgresFact]
    public async Task CompleteBatchStatement_ProbesThePrimaryKey_EvenWithStaleStatistics()
    {
        var database = PostgresServer.UniqueName("stale_stats");
        await PostgresServer.ScalarAsync($"CREATE DATABASE {database}");
        try
        {
            var connectionString = new NpgsqlConnectionStringBuilder(PostgresServer.Require()) { Database = database }.ConnectionString;
            await using var transport = PostgresServer.CreateTransport(connectionString: connectionString);
            var queue = await transport.CreateQueueAsync("stale");
            await using var dataSource = NpgsqlDataSource.Create(connectionString);
            const string Fill = "INSERT INTO priorityasync.messages (queue, message_id, body) SELECT 'stale', 'm' || g, '\\x00000000' FROM generate_series(1, 20000) g";
            foreach (var sql in new[] { "ALTER TABLE priorityasync.messages SET (autovacuum_enabled = false)", Fill, "DELETE FROM priorityasync.messages", "VACUUM ANALYZE priorityasync.messages", Fill })
            {
                await using var command = dataSource.CreateCommand(sql);
                await command.ExecuteNonQueryAsync();
            }

            var batch = (await queue.ReceiveBatchAsync(100)).Cast<PostgreSqlLeasedMessage>().ToList();
            batch.Should().HaveCount(100);
            var ids = batch.Select(m => m.SequenceNumber).ToArray();
            var tokens = batch.Select(m => m.LockToken).ToArray();

            var plan = await ExplainAsync(dataSource, Sql.CompleteBatch, ids, tokens);
            output.WriteLine(plan);
            plan.Should().Contain("messages_pkey").And.NotContain("Seq Scan on messages");

            // The precondition: with the arrays visible to the planner, these statistics do get a sequential scan.
            var visible = Sql.CompleteBatch.Replace("(SELECT @ids::bigint[])", "@ids::bigint[]", StringComparison.Ordinal).Replace("(SELECT @tokens::uuid[])", "@tokens::uuid[]", StringComparison.Ordinal);
            visible.Should().NotBe(Sql.CompleteBatch);
            var naive = await ExplainAsync(dataSource, visible, ids, tokens);
            output.WriteLine(naive);
            naive.Should().Contain("Seq Scan on messages", "the statistics are stale, as intended");

            (await queue.CompleteBatchAsync(batch)).Should().HaveCount(100).And.OnlyContain(o => o == null);
        }
        finally
        {
            NpgsqlConnection.ClearAllPools();
            await PostgresServer.ScalarAsync($"DROP DATABASE IF EXISTS {database} WITH (FORCE)");
        }
    }

    private static async Task<string> ExplainAsync(NpgsqlDataSource dataSource, string sql, long[] ids, Guid[] tokens)
    {
        await using var command = dataSource.CreateCommand("EXPLAIN " + sql);
        command.Parameters.Add(new NpgsqlParameter<long[]>("ids", ids));
        command.Parameters.Add(new NpgsqlParameter<Guid[]>("tokens", tokens));
        await using var reader = await command.ExecuteReaderAsync();
        var lines = new List<string>();
        while (await reader.ReadAsync())
        {
            lines.Add(reader.GetString(0));
        }

        return string.Join("\n", lines);
    }
}
