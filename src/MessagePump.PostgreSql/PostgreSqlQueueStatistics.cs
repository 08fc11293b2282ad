namespace PriorityAsync.MessagePump.PostgreSql;

/// <summary>Counts of one queue read from the database in one statement, judged on the server's clock.</summary>
/// <param name="Visible">Messages a receive can take now: never locked, abandoned, or whose lock expired.</param>
/// <param name="Locked">Messages under an unexpired lock.</param>
/// <param name="DeadLettered">Messages in the dead-letter table.</param>
public sealed record PostgreSqlQueueStatistics(long Visible, long Locked, long DeadLettered)
{
    /// <summary>Gets the messages still in the queue (<see cref="Visible"/> + <see cref="Locked"/>).</summary>
    public long Pending => Visible + Locked;
}
