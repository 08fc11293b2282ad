namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

/// <summary>Real-clock pump tests run one at a time, so that they do not starve each other's lease lanes on a small machine.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class RealTimeCollection
{
    public const string Name = "Service Bus real time";
}
