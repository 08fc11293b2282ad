using Microsoft.Extensions.Logging;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// The bound of docs/message-pump.md: from the broker's answer to a receive to the start of the message's lease keeper,
/// at most one slice of whatever runs when the answer arrives — even when a burst of processing work becomes ready at
/// the same moment. Virtual time, one thread: the burst is ten 100 ms CPU slices posted the instant the broker answers.
/// </summary>
public class LeaseFromTheAnswerTests
{
    private static readonly TimeSpan Slice = TimeSpan.FromMilliseconds(100);

    [Theory]
    [InlineData(1)]
    [InlineData(20)]
    [InlineData(100)]
    public void KeeperStarts_WithinOneSliceOfTheAnswer_AheadOfProcessingReadyAtTheSameMoment(int latencyMs)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions
        {
            LockDuration = TimeSpan.FromSeconds(1),
            Latency = TimeSpan.FromMilliseconds(latencyMs),
        });
        for (var i = 0; i < 5; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        var answers = new List<DateTimeOffset>();
        var starts = new StartLog(clock);
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var source = new BurstOnAnswer(queue, scheduler.GetLane(LanePriority.Processing), clock, answers);
            var pump = new PriorityMessagePump(source, (_, _) => Task.CompletedTask, scheduler, new MessagePumpOptions { MaxInFlight = 1 }, starts);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 5, clock, TimeSpan.FromMinutes(10));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        answers.Should().HaveCount(5);
        starts.Times.Should().HaveCount(5);
        for (var i = 0; i < 5; i++)
        {
            (starts.Times[i] - answers[i]).Should().BeLessThanOrEqualTo(Slice, $"message {i}: the keeper starts ahead of the burst of processing that became ready with the answer");
        }

        stats!.LeasesLost.Should().Be(0, "1 s locks, and ten 100 ms slices ready at every answer");
    }

    /// <summary>A source that, the instant the broker answers with a message, makes a burst of processing work ready.</summary>
    private sealed class BurstOnAnswer(InMemoryQueue inner, Lane processing, VirtualTimeProvider clock, List<DateTimeOffset> answers) : IMessageSource
    {
        public TimeSpan? LockDuration => inner.LockDuration;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            inner.ReceiveAsync(cancellationToken).ContinueWith(
                received =>
                {
                    if (received.Result is not null)
                    {
                        answers.Add(clock.GetUtcNow());
                        for (var i = 0; i < 10; i++)
                        {
                            processing.SynchronizationContext.Post(_ => clock.Advance(Slice), null);
                        }
                    }

                    return received.Result;
                },
                CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default);
    }

    /// <summary>Records, on the virtual clock, when the pump started each message (its "received" event).</summary>
    private sealed class StartLog(VirtualTimeProvider clock) : ILogger
    {
        public List<DateTimeOffset> Times { get; } = [];

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (eventId.Id == 10)
            {
                Times.Add(clock.GetUtcNow());
            }
        }
    }
}
