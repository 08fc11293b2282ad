namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>Starting after disposal, and options whose values would overflow date or timer arithmetic later.</summary>
public class PumpLifecycleInputTests
{
    [Fact]
    public async Task StartAsync_AfterDispose_ThrowsObjectDisposedException()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        var pump = new PriorityMessagePump(new InMemoryTransport().CreateQueue("q"), (_, _) => Task.CompletedTask, scheduler);
        await pump.DisposeAsync();

        await pump.Invoking(p => p.StartAsync()).Should().ThrowExactlyAsync<ObjectDisposedException>();
    }

    [Fact]
    public async Task StartAsync_OnADisposedScheduler_ThrowsObjectDisposedException_Unwrapped_AndLeavesThePumpStoppable()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        var pump = new PriorityMessagePump(new InMemoryTransport().CreateQueue("q"), (_, _) => Task.CompletedTask, scheduler);
        await scheduler.DisposeAsync();

        await pump.Invoking(p => p.StartAsync()).Should().ThrowExactlyAsync<ObjectDisposedException>();
        await pump.StopAsync().WaitAsync(TimeSpan.FromSeconds(30));
    }

    [Fact]
    public async Task DefaultMaxInFlight_OnTheLargestScheduler_DoesNotOverflow()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions
        {
            WorkerCount = PriorityTaskSchedulerOptions.MaxWorkerCount,
            Mode = PriorityWorkerMode.ThreadPool, // no thread per worker
            ReservedWorkerCount = 0,
        });

        var pump = new PriorityMessagePump(new InMemoryTransport().CreateQueue("q"), (_, _) => Task.CompletedTask, scheduler);

        pump.MaxInFlight.Should().Be(PriorityTaskSchedulerOptions.MaxWorkerCount * MessagePumpOptions.DefaultInFlightPerWorker);
    }

    [Theory]
    [InlineData("LockDuration")]
    [InlineData("Latency")]
    public void InMemoryQueueOptions_LongerThanAnyTimer_AreRejected_NamingTheOption(string option)
    {
        var options = new InMemoryQueueOptions();
        typeof(InMemoryQueueOptions).GetProperty(option)!.SetValue(options, TimeSpan.MaxValue);

        var create = () => new InMemoryTransport().CreateQueue("q", options);

        create.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be(option);
    }

    [Theory]
    [InlineData("TransientRetryDelay")]
    [InlineData("EmptyReceiveDelay")]
    [InlineData("ShutdownTimeout")]
    public async Task MessagePumpOptions_LongerThanAnyTimer_AreRejected_NamingTheOption(string option)
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        var options = new MessagePumpOptions();
        typeof(MessagePumpOptions).GetProperty(option)!.SetValue(options, TimeSpan.MaxValue);

        var create = () => new PriorityMessagePump(new InMemoryTransport().CreateQueue("q"), (_, _) => Task.CompletedTask, scheduler, options);

        create.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be(option);
    }
}
