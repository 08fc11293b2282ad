using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Tests.Support;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Transport;

/// <summary>A database of its own, without the schema: opening a queue says so, and concurrent migrations do not race.</summary>
public class FreshDatabaseTests
{
    [PostgresFact]
    public async Task UnknownQueue_WithoutTheSchema_ThrowsNamingTheQueue_AndConcurrentMigrationsAreSafe()
    {
        var database = PostgresServer.UniqueName("fresh");
        await PostgresServer.ScalarAsync($"CREATE DATABASE {database}");
        try
        {
            var connectionString = new NpgsqlConnectionStringBuilder(PostgresServer.Require()) { Database = database }.ConnectionString;
            await using var transport = new PostgreSqlTransport(connectionString);
            var thrown = await FluentActions.Awaiting(() => transport.GetQueueAsync("orders")).Should().ThrowAsync<ArgumentException>();
            thrown.Which.ParamName.Should().Be("name");
            thrown.Which.Message.Should().Contain("'orders'").And.Contain("schema does not exist");

            var transports = Enumerable.Range(0, 4).Select(_ => new PostgreSqlTransport(connectionString)).ToList();
            try
            {
                await Task.WhenAll(transports.Select(t => t.CreateQueueAsync("orders")));
            }
            finally
            {
                foreach (var other in transports)
                {
                    await other.DisposeAsync();
                }
            }

            (await transport.GetQueueAsync("orders")).Name.Should().Be("orders");
        }
        finally
        {
            NpgsqlConnection.ClearAllPools();
            await PostgresServer.ScalarAsync($"DROP DATABASE IF EXISTS {database} WITH (FORCE)");
        }
    }
}
