using PriorityAsync.MessagePump.PostgreSql.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Pump;

/// <summary>
/// A settle call on the leased message itself goes through the pump's settlement on the real server: counted once as
/// what it was, the message not settled again when the handler returns. Outcomes only, never durations.
/// </summary>
[Collection(RealTimeCollection.Name)]
public class SettlementPathTests(ITestOutputHelper output)
{
    [PostgresFact]
    public async Task ADeadLetterOnTheLeasedMessage_IsCountedAsADeadLetter_AndTheMessageIsNotCompletedAfterIt()
    {
        await using var transport = PostgresServer.CreateTransport(new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.FromMilliseconds(200), PollInterval = TimeSpan.FromMilliseconds(100) });
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("settle_path"), new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        await queue.SendAsync(new byte[] { 1 }, "m0");
        var logger = new ListLogger();
        MessagePumpStatistics? stats = null;

        PriorityAsyncContext.Run(async () =>
        {
            await using var pump = new PriorityMessagePump(
                queue,
                (context, _) => context.Message.DeadLetterAsync("poison"),
                PriorityScheduler.Current!,
                new MessagePumpOptions { Name = "pg-settle", EmptyReceiveDelay = TimeSpan.FromMilliseconds(100) },
                logger);
            await pump.StartAsync();
            await Bounded.UntilAsync(async () => (await queue.GetStatisticsAsync()).DeadLettered == 1, TimeSpan.FromSeconds(30), "the dead letter", TimeSpan.FromMilliseconds(100));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        output.WriteLine($"pump: {stats}");
        output.WriteLine(logger.ToString());
        stats.Should().BeEquivalentTo(new { Received = 1, DeadLettered = 1, Completed = 0, LeasesLost = 0, SettleFailures = 0 });
        logger.Entries.Should().NotContain(e => e.Level >= Microsoft.Extensions.Logging.LogLevel.Error);
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(0, 0, 1));
        (await queue.GetDeadLettersAsync()).Should().ContainSingle().Which.Reason.Should().Be("poison");
    }
}
