using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;
using PriorityAsync.MessagePump.PostgreSql.Tests.Support;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Transport;

/// <summary>Headers are stored in the <c>headers</c> column, read back on receive, and the column is added to an older schema.</summary>
public class HeadersTests
{
    private static readonly Dictionary<string, string> Sample = new()
    {
        ["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ["tracestate"] = "congo=t61rcWkgMzE",
        ["quote\"and\\slash"] = "ünïcødé \n line",
    };

    [PostgresFact]
    public async Task Headers_RoundTrip_ThroughSendAndSendBatch_AndSurviveRedelivery()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("headers"));
        await queue.SendAsync(new byte[] { 1 }, "single", Sample);
        await queue.SendBatchAsync([
            new PostgreSqlMessage(new byte[] { 2 }, "batched") { Headers = new Dictionary<string, string> { ["k"] = "v" } },
            new PostgreSqlMessage(new byte[] { 3 }, "none"),
            new PostgreSqlMessage(new byte[] { 4 }, "empty") { Headers = new Dictionary<string, string>() },
        ]);

        var batch = await queue.ReceiveBatchAsync(10);
        batch.Select(m => m.MessageId).Should().Equal("single", "batched", "none", "empty");
        batch[0].Headers.Should().BeEquivalentTo(Sample);
        batch[1].Headers.Should().BeEquivalentTo(new Dictionary<string, string> { ["k"] = "v" });
        batch[2].Headers.Should().BeEmpty();
        batch[3].Headers.Should().BeEmpty();

        await batch[0].AbandonAsync();
        var again = (await queue.ReceiveAsync())!;
        again.MessageId.Should().Be("single");
        again.DeliveryCount.Should().Be(2);
        again.Headers.Should().BeEquivalentTo(Sample);

        await again.DeadLetterAsync("poison");
        var dead = (await queue.GetDeadLettersAsync()).Single();
        dead.MessageId.Should().Be("single");
        dead.Headers.Should().BeEquivalentTo(Sample, "dead-lettering keeps the headers");
    }

    [PostgresFact]
    public async Task Headers_WithANullValue_AreRejectedBeforeSending()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("headers_null"));
        var act = () => queue.SendAsync(new byte[] { 1 }, null, new Dictionary<string, string> { ["x"] = null! });
        (await act.Should().ThrowAsync<ArgumentException>()).Which.ParamName.Should().Be("messages");
        (await queue.GetStatisticsAsync()).Visible.Should().Be(0);
    }

    [PostgresFact]
    public async Task Migrate_WhenTheColumnExists_TakesNoExclusiveLock()
    {
        // A reader holds the weakest table lock until it commits: an ALTER TABLE would wait for it.
        await using var transport = PostgresServer.CreateTransport();
        await transport.MigrateAsync();
        await using var reader = await transport.DataSource.OpenConnectionAsync();
        await using var transaction = await reader.BeginTransactionAsync();
        await using (var read = new NpgsqlCommand("SELECT count(*) FROM priorityasync.messages WHERE false", reader, transaction))
        {
            await read.ExecuteScalarAsync();
        }

        await using var other = PostgresServer.CreateTransport();
        await other.MigrateAsync().WaitAsync(TimeSpan.FromSeconds(10));
        await transaction.RollbackAsync();
    }

    [PostgresFact]
    public async Task Migrate_AddsTheHeadersColumn_ToASchemaWithoutIt_KeepingItsRows()
    {
        var database = PostgresServer.UniqueName("oldschema");
        await PostgresServer.ScalarAsync($"CREATE DATABASE {database}");
        try
        {
            var connectionString = new NpgsqlConnectionStringBuilder(PostgresServer.Require()) { Database = database }.ConnectionString;
            var oldSchema = Sql.Schema[..Sql.Schema.IndexOf("DO $$", StringComparison.Ordinal)]; // the schema before headers
            oldSchema.Should().NotContain("headers");
            await using (var dataSource = NpgsqlDataSource.Create(connectionString))
            {
                await using var command = dataSource.CreateCommand(oldSchema + """
                    ;
                    INSERT INTO priorityasync.queues (name, lock_duration, max_delivery_count) VALUES ('orders', interval '30 seconds', 5);
                    INSERT INTO priorityasync.messages (queue, message_id, body) VALUES ('orders', 'old', '\x01');
                    """);
                await command.ExecuteNonQueryAsync();
            }

            await using var transport = new PostgreSqlTransport(connectionString, new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.Zero });
            await transport.MigrateAsync();
            var queue = await transport.GetQueueAsync("orders");
            await queue.SendAsync(new byte[] { 2 }, "new", Sample);

            var batch = await queue.ReceiveBatchAsync(10);
            batch.Select(m => m.MessageId).Should().Equal("old", "new");
            batch[0].Headers.Should().BeEmpty("a row from before the column has NULL headers");
            batch[1].Headers.Should().BeEquivalentTo(Sample);
        }
        finally
        {
            NpgsqlConnection.ClearAllPools();
            await PostgresServer.ScalarAsync($"DROP DATABASE IF EXISTS {database} WITH (FORCE)");
        }
    }
}
