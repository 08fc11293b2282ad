using PriorityAsync.MessagePump.PostgreSql.Tests.Support;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Transport;

/// <summary>
/// The native batch renewal of <see cref="PostgreSqlQueue"/>: one statement for the batch, each row fenced by its own
/// lock token, with an outcome per message in order.
/// </summary>
public class RenewBatchTests
{
    [PostgresFact]
    public async Task RenewBatch_RenewsEveryHeldLease_AndAnswersLeaseLostForASettledOrReplacedDelivery()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("renew_batch"), new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        await queue.SendBatchAsync(Enumerable.Range(0, 4).Select(i => new PostgreSqlMessage(new byte[] { (byte)i }, $"m{i}")));
        var batch = (await queue.ReceiveBatchAsync(4)).Cast<PostgreSqlLeasedMessage>().ToList();
        await batch[1].CompleteAsync();
        var before = batch.Select(m => m.ServerLockedUntil).ToList();
        await Task.Delay(TimeSpan.FromMilliseconds(50));
        IMessageSource source = queue;

        var outcomes = await source.RenewBatchAsync(batch);

        source.RenewsBatchesNatively.Should().BeTrue();
        outcomes.Should().HaveCount(4);
        outcomes[1].Failure.Should().BeOfType<LeaseLostException>().Which.Message.Should().Contain("Cannot renew");
        foreach (var i in new[] { 0, 2, 3 })
        {
            outcomes[i].IsRenewed.Should().BeTrue($"message {i} still holds its lock");
            outcomes[i].LockedUntil.Should().Be(batch[i].LockedUntil, "the message's LockedUntil is updated as by its own renewal");
            batch[i].ServerLockedUntil.Should().BeAfter(before[i], "the server moved its lock");
        }
    }

    [PostgresFact]
    public async Task RenewBatch_FencesEachRowByItsOwnToken_AnExpiredDeliveryRedeliveredElsewhereIsNotRenewed()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("renew_fence"), new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromSeconds(1) });
        await queue.SendBatchAsync([new PostgreSqlMessage(new byte[] { 1 }, "stale"), new PostgreSqlMessage(new byte[] { 2 }, "held")]);
        var first = (await queue.ReceiveBatchAsync(1)).Cast<PostgreSqlLeasedMessage>().Single();
        await Bounded.UntilAsync(async () => (await queue.GetStatisticsAsync()).Visible == 2, TimeSpan.FromSeconds(30), "the first lock to expire");
        var again = (await queue.ReceiveBatchAsync(2)).Cast<PostgreSqlLeasedMessage>().ToList();
        var redelivered = again.Single(m => m.MessageId == "stale");
        var held = again.Single(m => m.MessageId == "held");

        var outcomes = await queue.RenewBatchAsync([first, held, redelivered]);

        outcomes[0].Failure.Should().BeOfType<LeaseLostException>("the old delivery's token no longer holds the row, though the row is locked again");
        outcomes[1].IsRenewed.Should().BeTrue();
        outcomes[2].IsRenewed.Should().BeTrue();
        redelivered.DeliveryCount.Should().Be(2);
    }

    [PostgresFact]
    public async Task RenewBatch_RejectsAnInvalidBatch_NamingMessages()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("renew_args"));
        var other = await transport.CreateQueueAsync(PostgresServer.UniqueName("renew_other"));
        await other.SendAsync(new byte[] { 1 }, "theirs");
        var theirs = (await other.ReceiveBatchAsync(1)).Single();

        await FluentActions.Awaiting(() => queue.RenewBatchAsync(null!)).Should().ThrowAsync<ArgumentNullException>().WithParameterName("messages");
        await FluentActions.Awaiting(() => queue.RenewBatchAsync([])).Should().ThrowAsync<ArgumentException>().WithParameterName("messages")
            .WithMessage("A batch to renew must hold at least one message.*");
        (await FluentActions.Awaiting(() => queue.RenewBatchAsync([theirs])).Should().ThrowAsync<ArgumentException>().WithParameterName("messages"))
            .Which.Message.Should().StartWith("The message at index 0");
    }
}
