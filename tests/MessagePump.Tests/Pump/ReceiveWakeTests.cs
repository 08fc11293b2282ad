namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>The receive loop's pause after an empty receive ends when a source has messages for the pump (virtual time).</summary>
public sealed class ReceiveWakeTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void WakeReceive_EndsThePauseAfterAnEmptyReceive(bool wake)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q");
        DateTimeOffset? handledAt = null;
        var sentAt = default(DateTimeOffset);
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                (_, _) =>
                {
                    handledAt = clock.GetUtcNow();
                    return Task.CompletedTask;
                },
                scheduler,
                new MessagePumpOptions { EmptyReceiveDelay = TimeSpan.FromHours(1) });
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(5), clock); // the first receive found nothing: the pump pauses for an hour
            queue.Send(new byte[] { 1 }, "m");
            sentAt = clock.GetUtcNow();
            if (wake)
            {
                pump.WakeReceive();
            }

            await VirtualRun.WaitUntilAsync(() => handledAt is not null, clock, TimeSpan.FromHours(2), TimeSpan.FromSeconds(1));
            await pump.StopAsync();
        });

        var waited = handledAt!.Value - sentAt;
        if (wake)
        {
            waited.Should().BeLessThan(TimeSpan.FromSeconds(2), "the pause ends at the wake");
        }
        else
        {
            waited.Should().BeGreaterThan(TimeSpan.FromMinutes(50), "without a wake the pause runs its hour");
        }
    }
}
