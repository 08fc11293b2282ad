namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// <see cref="MessagePumpOptions.ReceiveDuringSettlement"/>: a message's slot frees when its settlement is sent (the
/// next receive need not wait for the broker's answer), at most <see cref="PriorityMessagePump.MaxInFlight"/>
/// settlements are awaited at once, and the message stays in flight, renewed and waited for by the stop, until the
/// answer. Virtual time, one thread; every settle call takes 2 s to reach the broker, every handler 1 s.
/// </summary>
public class SettlementSlotTests
{
    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan Handle = TimeSpan.FromSeconds(1);

    [Fact]
    public void OneInFlight_TheNextReceive_GoesOutWhenTheCompleteIsSent_AndAtMostOneSettlementIsAwaited()
    {
        var run = Drain(new MessagePumpOptions { MaxInFlight = 1 }, messages: 3);

        // m1: handled 0–1 s, complete answered at 3 s. m2 is received at 1 s, when m1's complete is sent; handled 1–2 s.
        // At 2 s two settlements are awaited (the limit with MaxInFlight 1), so m3 waits for m1's answer at 3 s.
        run.ReceivedAt.Should().Equal(Seconds(0), Seconds(1), Seconds(3));
        run.Stats.Should().BeEquivalentTo(new { Received = 3, Completed = 3, LeasesLost = 0, InFlight = 0, PeakInFlight = 2 });
        run.Broker.Should().BeEquivalentTo(new { Completed = 3, InFlight = 0, Available = 0 });
    }

    [Fact]
    public void Off_TheNextReceive_WaitsForTheBrokersAnswer()
    {
        var run = Drain(new MessagePumpOptions { MaxInFlight = 1, ReceiveDuringSettlement = false }, messages: 3);

        run.ReceivedAt.Should().Equal(Seconds(0), Seconds(3), Seconds(6));
        run.Stats.Should().BeEquivalentTo(new { Received = 3, Completed = 3, LeasesLost = 0, InFlight = 0, PeakInFlight = 1 });
    }

    /// <summary>A handler that completes its message itself and goes on working keeps its slot until it returns.</summary>
    [Fact]
    public void AHandlerThatSettlesItself_KeepsItsSlot_UntilItReturns()
    {
        var run = Drain(
            new MessagePumpOptions { MaxInFlight = 1 },
            messages: 2,
            async (context, token) =>
            {
                await context.CompleteAsync(); // answered 2 s later
                await Task.Delay(Handle, context.TimeProvider, token); // then 1 s more of the handler's own work
            });

        run.ReceivedAt.Should().Equal([Seconds(0), Seconds(3)], "one handler at a time: m2 waits for m1's handler to return at 3 s");
        run.Stats.Should().BeEquivalentTo(new { Received = 2, Completed = 2, PeakInFlight = 1 });
    }

    /// <summary>A broker that answers receives but not settlements gets no more than 2 × MaxInFlight locks from the pump.</summary>
    [Fact]
    public void SettlementsThatAreNeverAnswered_HoldAtMostTwiceMaxInFlightLocks()
    {
        var clock = new VirtualTimeProvider();
        var queue = Queue(clock, messages: 20, TimeSpan.FromMinutes(1));

        var source = new ScriptedSource(queue) { SettleLatency = TimeSpan.FromHours(1) };
        MessagePumpStatistics? during = null;
        MessagePumpStatistics? after = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(source, (_, _) => Task.CompletedTask, scheduler, new MessagePumpOptions { MaxInFlight = 3 });
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromMinutes(30), clock);
            during = pump.GetStatistics();
            await pump.StopAsync();
            after = pump.GetStatistics();
        });

        during.Should().BeEquivalentTo(new { Received = 6, Completed = 0, InFlight = 6, PeakInFlight = 6, LeasesLost = 0 }, "3 handled and sent, 3 more received and sent, then no receive until an answer");
        during!.Renewals.Should().Be(0, "no renewal goes out once a message's settlement has begun");
        after.Should().BeEquivalentTo(
            new { Received = 6, Completed = 0, InFlight = 0, LeasesLost = 6, UnsettledAtStop = 6 },
            "the stop stops renewing and waits out the locks of settlements still unanswered (the shutdown contract)");
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 0, InFlight = 0, Available = 20 }, "nothing stays locked: the six come back");
    }

    [Fact]
    public void AStopWhileSettlementsAreAnswered_WaitsForThem_AndLeavesNothingLocked()
    {
        var clock = new VirtualTimeProvider();
        var queue = Queue(clock, messages: 3, TimeSpan.FromSeconds(10));

        var source = new ScriptedSource(queue) { SettleLatency = Settle };
        MessagePumpStatistics? stats = null;
        var stoppedAt = TimeSpan.Zero;
        VirtualRun.Run(clock, async scheduler =>
        {
            var start = clock.GetUtcNow();
            var pump = new PriorityMessagePump(source, (context, token) => Task.Delay(Handle, context.TimeProvider, token), scheduler, new MessagePumpOptions { MaxInFlight = 1 });
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(1.5), clock); // m1's complete is on its way, m2's handler runs
            await pump.StopAsync();
            stoppedAt = clock.GetUtcNow() - start;
            stats = pump.GetStatistics();
        });

        stoppedAt.Should().Be(Seconds(4), "the stop returns with m2's complete answered (sent at 2 s)");
        stats.Should().BeEquivalentTo(new { Received = 2, Completed = 2, AbandonedAtStop = 0, LeasesLost = 0, InFlight = 0 });
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 2, InFlight = 0, Available = 1 });
    }

    /// <summary>Drains a queue of <paramref name="messages"/> with a pump whose handler records when it started, then runs <paramref name="work"/> (1 s by default).</summary>
    private static (List<TimeSpan> ReceivedAt, MessagePumpStatistics Stats, InMemoryQueueStatistics Broker) Drain(
        MessagePumpOptions options, int messages, Func<MessageContext, CancellationToken, Task>? work = null)
    {
        var clock = new VirtualTimeProvider();
        var queue = Queue(clock, messages, TimeSpan.FromSeconds(10));
        var source = new ScriptedSource(queue) { SettleLatency = Settle };
        var receivedAt = new List<TimeSpan>();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var start = clock.GetUtcNow();
            var pump = new PriorityMessagePump(
                source,
                (context, token) =>
                {
                    receivedAt.Add(clock.GetUtcNow() - start);
                    return work?.Invoke(context, token) ?? Task.Delay(Handle, context.TimeProvider, token);
                },
                scheduler,
                options);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        return (receivedAt, stats!, queue.GetStatistics());
    }

    /// <summary>A queue on <paramref name="clock"/> holding <paramref name="messages"/> messages m0, m1, ...</summary>
    private static InMemoryQueue Queue(VirtualTimeProvider clock, int messages, TimeSpan lockDuration)
    {
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = lockDuration });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(new byte[] { 1 }, $"m{i}");
        }

        return queue;
    }

    private static TimeSpan Seconds(double value) => TimeSpan.FromSeconds(value);
}
