using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// StopAsync against a broker that stops answering settle calls: it returns within <c>ShutdownTimeout</c> plus the
/// lock's remaining time (renewals stop once the shutdown wait is over), reports the message it could not see
/// settled, counts it as a lost lease, and leaves nothing locked at the broker. Virtual time; every wait is bounded.
/// </summary>
public class StopWithSilentBrokerTests(ITestOutputHelper output)
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan ShutdownTimeout = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan Patience = TimeSpan.FromMinutes(10);

    [Theory]
    [InlineData(true, false)]
    [InlineData(false, false)]
    [InlineData(true, true)]
    [InlineData(false, true)]
    public void Stop_WhileTheHandlersCompleteGoesUnanswered_ReturnsWithinTheBound_AndNothingStaysLocked(bool honourToken, bool nativeBatches)
    {
        var result = Run(
            silent: "complete",
            honourToken,
            handler: (context, token) => Task.Delay(TimeSpan.FromSeconds(1), context.TimeProvider, token),
            nativeBatches);

        result.Returned.Should().BeTrue("StopAsync must return within ShutdownTimeout plus the lock ({0})", result);
        result.StoppedAfter.Should().BeLessThanOrEqualTo(ShutdownTimeout + LockDuration, result.ToString());
        result.BrokerAtReturn.InFlight.Should().Be(0, "nothing stays locked after StopAsync ({0})", result);
        result.Pump.Should().BeEquivalentTo(new { Received = 1, Completed = 0, LeasesLost = 1, UnsettledAtStop = 1, InFlight = 0 }, result.ToString());
        result.Pump.ShouldBeConsistent();
        result.Pump.ShouldMatch(result.BrokerAtReturn);
        result.BrokerAtReturn.ShouldBeConsistent();
        result.Logger.Entries.Count(e => e.EventId.Id == 32).Should().Be(1, result.Logger.ToString());
        result.CanceledCalls.Should().Be(1, "the stop path aborts the unanswered call at the lock's expiry");
        var operation = honourToken || nativeBatches ? "complete" : "settle"; // a call that ends on its abort reports its own loss
        var lost = result.Logger.Entries.Where(e => e.EventId.Id == 22).Should().ContainSingle().Which;
        lost.Message.Should().Contain($"lost the lease of m1 during {operation};", result.Logger.ToString());
        if (nativeBatches)
        {
            lost.Exception.Should().BeOfType<OperationCanceledException>().Which.Message.Should().Contain("the lock expired with renewals stopped", "the log says why the batched completion ended");
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Stop_WhenItsOwnAbandonGoesUnanswered_ReturnsWithinTheBound_AndReportsIt(bool honourToken)
    {
        var result = Run(
            silent: "abandon",
            honourToken,
            handler: (context, token) => Task.Delay(TimeSpan.FromMinutes(5), context.TimeProvider, token));

        result.Returned.Should().BeTrue("StopAsync must return within ShutdownTimeout plus the lock ({0})", result);
        result.StoppedAfter.Should().BeLessThanOrEqualTo(ShutdownTimeout + LockDuration, result.ToString());
        result.BrokerAtReturn.InFlight.Should().Be(0, "nothing stays locked after StopAsync ({0})", result);
        result.Pump.Should().BeEquivalentTo(new { Received = 1, Abandoned = 0, AbandonedAtStop = 0, LeasesLost = 1, UnsettledAtStop = 1, InFlight = 0 }, result.ToString());
        result.Pump.ShouldBeConsistent();
        result.Pump.ShouldMatch(result.BrokerAtReturn);
        result.BrokerAtReturn.ShouldBeConsistent();
        result.Logger.Entries.Count(e => e.EventId.Id == 32).Should().Be(1, result.Logger.ToString());
        result.CanceledCalls.Should().Be(1, "the stop path aborts the unanswered call at the lock's expiry");
        var operation = honourToken ? "abandon" : "settle";
        result.Logger.Entries.Where(e => e.EventId.Id == 22).Should().ContainSingle().Which.Message.Should().Contain($"lost the lease of m1 during {operation};", result.Logger.ToString());
    }

    private StopResult Run(string silent, bool honourToken, Func<MessageContext, CancellationToken, Task> handler, bool nativeBatches = false)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = LockDuration });
        queue.Send(new byte[] { 1 }, "m1");
        var source = new SilentSettlements(queue, operation => operation == silent, honourToken, nativeBatches);
        var logger = new ListLogger();
        var result = new StopResult(logger);
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(source, handler, scheduler, new MessagePumpOptions { ShutdownTimeout = ShutdownTimeout }, logger);
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(5), scheduler.TimeProvider); // the keeper renews meanwhile (10 s before expiry)
            var start = clock.GetUtcNow();

            // Not Task.WhenAny: it would complete through the thread pool, and the virtual clock would run ahead meanwhile.
            var stopped = RecordStopAsync(pump.StopAsync());
            await VirtualRun.WaitUntilAsync(() => stopped.IsCompleted, scheduler.TimeProvider, Patience, TimeSpan.FromMilliseconds(100))
                .ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
            result.Returned = stopped.IsCompleted;

            async Task RecordStopAsync(Task stop)
            {
                await stop;
                result.StoppedAfter = clock.GetUtcNow() - start;
                result.BrokerAtReturn = queue.GetStatistics();
                result.Pump = pump.GetStatistics();
            }
        });

        source.SilentCalls.Should().Be(1, "the scenario reached the silent call");
        result.CanceledCalls = source.CanceledCalls;
        output.WriteLine(result.ToString());
        return result;
    }

    private sealed class StopResult(ListLogger logger)
    {
        public ListLogger Logger { get; } = logger;

        public bool Returned { get; set; }

        public TimeSpan StoppedAfter { get; set; }

        public InMemoryQueueStatistics BrokerAtReturn { get; set; } = new();

        public MessagePumpStatistics Pump { get; set; } = new();

        public int CanceledCalls { get; set; }

        public override string ToString() => $"returned {Returned} after {StoppedAfter}; pump {Pump}; broker {BrokerAtReturn}";
    }
}
