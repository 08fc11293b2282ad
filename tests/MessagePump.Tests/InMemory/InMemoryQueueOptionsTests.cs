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

        new InMemoryTransport().Invoking(b => b.CreateQueue("q", options))
            .Should().Throw<ArgumentOutOfRangeException>().WithParameterName(option).WithMessage($"InMemoryQueueOptions.{option} *");
    }

    [Fact]
    public void CreateQueue_OptionsAtTheirLimits_AreAccepted()
    {
        var broker = new InMemoryTransport();
        var limits = new InMemoryQueueOptions[]
        {
            new() { LockDuration = TimeSpan.FromTicks(1) },
            new() { LockDuration = PrioritySchedulerOptions.MaxTimerDelay },
            new() { MaxDeliveryCount = 1 },
            new() { RenewFailureRate = 0, CompleteFailureRate = 0 },
            new() { RenewFailureRate = 1, CompleteFailureRate = 1 },
            new() { Latency = TimeSpan.Zero },
            new() { Latency = PrioritySchedulerOptions.MaxTimerDelay },
        };

        for (var i = 0; i < limits.Length; i++)
        {
            broker.CreateQueue($"q{i}", limits[i]).Name.Should().Be($"q{i}");
        }

        broker.CreateQueue("defaults").Should().Match<InMemoryQueue>(q => q.LockDuration == TimeSpan.FromSeconds(60) && q.MaxDeliveryCount == 10);
    }

    [Fact]
    public void CreateQueue_BlankName_Throws()
    {
        new InMemoryTransport().Invoking(b => b.CreateQueue(" ")).Should().Throw<ArgumentException>().WithParameterName("name");
    }
}
