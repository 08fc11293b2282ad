using PriorityAsync.Messaging.PostgreSql.Internal;
using PriorityAsync.Tests.Shared;

namespace PriorityAsync.Messaging.PostgreSql.Tests.Docs;

/// <summary>docs/postgresql.md shows the schema the code creates, verbatim.</summary>
public class PostgreSqlDocsTests
{
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
