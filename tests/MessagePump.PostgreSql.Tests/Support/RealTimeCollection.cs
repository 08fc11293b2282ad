namespace PriorityAsync.MessagePump.PostgreSql.Tests.Support;

/// <summary>
/// The real-clock scenarios (CPU-heavy handlers, several processes, throughput figures): they run one at a time,
/// after this assembly's other tests, because on a 2-core machine they would otherwise steal each other's CPU and time.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class RealTimeCollection
{
    public const string Name = "Real time";
}
