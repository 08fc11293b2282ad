namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// <see cref="MessageContext.RecordHandlerFailure"/>: a wrapper that catches its handler's exception and settles the
/// message itself (a processor-shaped API) still has the failure counted, as for a handler that throws to the pump.
/// </summary>
public class RecordHandlerFailureTests
{
    private readonly VirtualTimeProvider _clock = new();

    [Fact]
    public void A_failure_the_wrapper_caught_is_counted_once_and_the_message_is_settled_as_the_wrapper_chose()
    {
        var queue = new InMemoryTransport(_clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(new byte[] { 1 });
        queue.Send(new byte[] { 2 });
        Exception? nullRejected = null;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(_clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, _) =>
                {
                    try
                    {
                        throw new InvalidOperationException("the wrapped handler failed");
                    }
                    catch (InvalidOperationException ex)
                    {
                        nullRejected ??= Record.Exception(() => context.RecordHandlerFailure(null!));
                        context.RecordHandlerFailure(ex);
                        await context.AbandonAsync();
                    }
                },
                scheduler,
                new MessagePumpOptions { MaxInFlight = 1 });
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        nullRejected.Should().BeOfType<ArgumentNullException>().Which.ParamName.Should().Be("exception");
        stats!.HandlerFailures.Should().BeGreaterThanOrEqualTo(2, "each delivery's caught failure is counted");
        stats.HandlerFailures.Should().Be(stats.Abandoned, "one failure per delivery, each abandoned by the wrapper");
        stats.Completed.Should().Be(0);
    }
}
