namespace PriorityAsync.TestKit;

/// <summary>
/// A test that needs the PostgreSQL server of <c>PRIORITYASYNC_POSTGRES</c>: skipped, with the reason, when the variable
/// is missing; but when CI=true it runs (and fails), so CI cannot skip the PostgreSQL tests silently.
/// </summary>
public sealed class PostgresFactAttribute : FactAttribute
{
    /// <summary>Creates the attribute; sets <see cref="FactAttribute.Skip"/> when no server is configured outside CI.</summary>
    public PostgresFactAttribute()
    {
        if (PostgresServer.ConnectionString is null && !PostgresServer.IsCi)
        {
            Skip = PostgresServer.SkipReason;
        }
    }
}
