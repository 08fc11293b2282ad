namespace PriorityAsync.MessagePump.Tests.InMemory;

public class InMemoryQueueOptionsTests
{
    public static TheoryData<string, Action<InMemoryQueueOptions>> InvalidOptions => new()
    {
        { nameof(InMemoryQueueOptions.LockDuration), o => o.LockDuration = TimeSpan.Zero },
        { nameof(InMemoryQueueOptions.LockDuration), o => o.LockDuration = TimeSpan.FromSeconds(-1) },
        { nameof(InMemoryQueueOptions.MaxDeliveryCount), o => o.MaxDeliveryCount = 0 },
        { nameof(InMemoryQueueOptions.RenewFailureRate), o => o.RenewFailureRate = -0.1 },
        { nameof(InMemoryQueueOptions.RenewFailureRate), o => o.RenewFailureRate = double.NaN },
        { nameof(InMemoryQueueOptions.CompleteFailureRate), o => o.CompleteFailureRate = 1.5 },
        { nameof(InMemoryQueueOptions.Latency), o => o.Latency = TimeSpan.FromMilliseconds(-1) },
    };

    [Theory]
    [MemberData(nameof(InvalidOptions))]
    public void CreateQueue_InvalidOption_ThrowsNamingIt(string option, Action<InMemoryQueueOptions> breakIt)
    {
        var options = new InMemoryQueueOptions();
        breakIt(options);

        new InMemoryLeaseBroker().Invoking(b => b.CreateQueue("q", options))
            .Should().Throw<ArgumentOutOfRangeException>().WithParameterName(option);
    }

    [Fact]
    public void CreateQueue_BlankName_Throws()
    {
        new InMemoryLeaseBroker().Invoking(b => b.CreateQueue(" ")).Should().Throw<ArgumentException>().WithParameterName("name");
    }
}
