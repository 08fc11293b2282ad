using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;
using PriorityAsync.MessagePump.PostgreSql.Tests.Support;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Docs;

/// <summary>docs/postgresql.md shows the schema the code creates and a quick start that compiles and runs, verbatim.</summary>
public class PostgreSqlDocsTests
{
    [PostgresFact]
    public async Task QuickStart_Runs()
    {
        var database = PostgresServer.UniqueName("quickstart");
        await PostgresServer.ScalarAsync($"CREATE DATABASE {database}");
        try
        {
            var queue = await QuickStartSample.RunAsync(new NpgsqlConnectionStringBuilder(PostgresServer.Require()) { Database = database }.ConnectionString);
            queue.Should().Be(new PostgreSqlQueueStatistics(0, 0, 0), "every message was completed, none dead-lettered or left locked");
        }
        finally
        {
            NpgsqlConnection.ClearAllPools();
            await PostgresServer.ScalarAsync($"DROP DATABASE IF EXISTS {database} WITH (FORCE)");
        }
    }

    [Fact]
    public void QuickStart_InTheDoc_IsTheCompiledSample()
    {
        var root = RepositoryRoot.Find();
        var sample = File.ReadAllLines(Path.Combine(root, "tests", "MessagePump.PostgreSql.Tests", "Docs", "QuickStartSample.cs"));
        var start = Array.FindIndex(sample, l => l.Trim() == "// <quick-start>") + 1;
        var end = Array.FindIndex(sample, l => l.Trim() == "// </quick-start>");
        var region = sample[start..end];
        var indent = region.Where(l => l.Trim().Length > 0).Min(l => l.Length - l.TrimStart().Length);
        var code = string.Join("\n", region.Select(l => l.Length >= indent ? l[indent..] : l.TrimStart()));

        var doc = File.ReadAllText(Path.Combine(root, "docs", "postgresql.md")).Replace("\r\n", "\n");

        doc.Should().Contain(code);
    }

    [Fact]
    public void SchemaBlock_IsTheSchemaTheCodeCreates()
    {
        var doc = File.ReadAllText(Path.Combine(RepositoryRoot.Find(), "docs", "postgresql.md")).Replace("\r\n", "\n");
        doc.Should().Contain($"```sql\n{Sql.Schema.Replace("\r\n", "\n").Trim()}\n```");
    }

    [Fact]
    public void QueueNameRule_IsTheOneTheSchemaChecks()
    {
        Sql.Schema.Should().Contain($"CHECK (name ~ '{QueueName.Rule}')");
    }
}
