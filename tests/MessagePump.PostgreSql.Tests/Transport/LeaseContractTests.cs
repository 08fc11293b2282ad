using PriorityAsync.MessagePump.PostgreSql.Tests.Support;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Transport;

/// <summary>The transport's lease contract on the real server: fencing, expiry, abandon, dead-letter, exact durations.</summary>
public class LeaseContractTests
{
    // Only ever waited out (a lower bound: a busy machine waits longer, never shorter). A lock the test must still hold
    // while it makes further calls is LongLock: those calls take what the machine's load makes them take.
    private static readonly TimeSpan ShortLock = TimeSpan.FromMilliseconds(400);
    private static readonly TimeSpan LongLock = TimeSpan.FromMinutes(5);

    [PostgresFact]
    public async Task SendReceiveComplete_RemovesTheMessage()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("basic"));
        var id = await queue.SendAsync(new byte[] { 1, 2, 3 }, "m1");

        var message = (await queue.ReceiveAsync())!;
        message.Should().NotBeNull();
        message.MessageId.Should().Be(id).And.Be("m1");
        message.Body.ToArray().Should().Equal(1, 2, 3);
        message.DeliveryCount.Should().Be(1);
        message.LockedUntil.Should().BeAfter(DateTimeOffset.UtcNow);
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(Visible: 0, Locked: 1, DeadLettered: 0));
        (await queue.ReceiveAsync()).Should().BeNull("the only message is locked");

        await message.CompleteAsync();
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(0, 0, 0));
        await FluentActions.Awaiting(() => message.CompleteAsync()).Should().ThrowAsync<LeaseLostException>("a second complete finds nothing");
        await FluentActions.Awaiting(() => message.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>();
    }

    [PostgresFact]
    public async Task StaleDelivery_CannotRenewOrSettle_TheNewerDeliverysLock()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("fencing"), new PostgreSqlQueueOptions { LockDuration = ShortLock });
        await queue.SendAsync(new byte[] { 7 }, "m1");

        var stale = (PostgreSqlLeasedMessage)(await queue.ReceiveAsync())!;
        await Task.Delay(ShortLock + TimeSpan.FromMilliseconds(100));

        // The fresh delivery's lock must outlast the stale calls below at any load: the queue's lock duration changes
        // for the next receive (CreateQueueAsync updates it), not for the stale lock that has already expired.
        await transport.CreateQueueAsync(queue.Name, new PostgreSqlQueueOptions { LockDuration = LongLock });
        var fresh = (PostgreSqlLeasedMessage)(await queue.ReceiveAsync())!;
        fresh.Should().NotBeNull("the lock expired on the server's clock, so the message is visible again");
        fresh.MessageId.Should().Be("m1");
        fresh.DeliveryCount.Should().Be(2);
        fresh.LockToken.Should().NotBe(stale.LockToken);
        var freshUntil = fresh.ServerLockedUntil;

        await FluentActions.Awaiting(() => stale.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>();
        await FluentActions.Awaiting(() => stale.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        await FluentActions.Awaiting(() => stale.AbandonAsync()).Should().ThrowAsync<LeaseLostException>();
        await FluentActions.Awaiting(() => stale.DeadLetterAsync("stale")).Should().ThrowAsync<LeaseLostException>();

        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(0, 1, 0), "the stale calls changed nothing");
        var lockedUntil = await PostgresServer.ScalarAsync(
            "SELECT locked_until FROM priorityasync.messages WHERE id = @id AND lock_token = @token",
            ("id", fresh.SequenceNumber),
            ("token", fresh.LockToken));
        ((DateTime)lockedUntil!).Should().Be(freshUntil.UtcDateTime, "the stale renew did not extend the newer lock");

        await fresh.CompleteAsync();
        (await queue.GetStatisticsAsync()).Pending.Should().Be(0);
    }

    [PostgresFact]
    public async Task ExpiredLock_IsLost_EvenBeforeAnotherReceive()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("expiry"), new PostgreSqlQueueOptions { LockDuration = ShortLock });
        await queue.SendAsync(new byte[] { 1 });
        var message = (await queue.ReceiveAsync())!;
        await Task.Delay(ShortLock + TimeSpan.FromMilliseconds(100));

        await FluentActions.Awaiting(() => message.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(1, 0, 0), "the message is visible again, not lost");
    }

    [PostgresFact]
    public async Task Renew_ExtendsTheLock_ByTheExactDuration_OnTheServersClock()
    {
        // Long enough that no renewal below comes after the lock expired, whatever the machine's load does to the
        // 0.5 s pauses; the fraction checks that durations keep their microseconds.
        var lockDuration = TimeSpan.FromSeconds(60) + TimeSpan.FromMilliseconds(1234.567);
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("renew"), new PostgreSqlQueueOptions { LockDuration = lockDuration });
        queue.LockDuration.Should().Be(lockDuration, "durations are kept to the microsecond, not truncated to seconds");
        (await PostgresServer.ScalarAsync("SELECT extract(epoch FROM lock_duration)::text FROM priorityasync.queues WHERE name = @n", ("n", queue.Name)))
            .Should().Be("61.234567");
        await queue.SendAsync(new byte[] { 1 });

        var message = (PostgreSqlLeasedMessage)(await queue.ReceiveAsync())!;
        var first = message.ServerLockedUntil;
        for (var i = 0; i < 4; i++)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(500));
            var until = await message.RenewLockAsync();
            until.Should().Be(message.LockedUntil);
        }

        message.ServerLockedUntil.Should().BeAfter(first + TimeSpan.FromSeconds(1.9), "four renewals 0.5 s apart outlive the first lock");
        await message.CompleteAsync();
    }

    [PostgresFact]
    public async Task Abandon_MakesTheMessageVisibleAtOnce_AndTheNextDeliveryCountsUp()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("abandon"), new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromMinutes(5) });
        await queue.SendAsync(new byte[] { 1 }, "m1");

        var first = (await queue.ReceiveAsync())!;
        await first.AbandonAsync();
        await FluentActions.Awaiting(() => first.AbandonAsync()).Should().ThrowAsync<LeaseLostException>();
        var second = (await queue.ReceiveAsync())!;
        second.MessageId.Should().Be("m1");
        second.DeliveryCount.Should().Be(2);
        await second.CompleteAsync();
    }

    [PostgresFact]
    public async Task AfterTheLastAllowedDelivery_TheMessageIsDeadLettered_InTheReceiveStatement()
    {
        await using var transport = PostgresServer.CreateTransport();
        var name = PostgresServer.UniqueName("poison");
        var queue = await transport.CreateQueueAsync(name, new PostgreSqlQueueOptions { LockDuration = LongLock, MaxDeliveryCount = 3 });
        await queue.SendAsync(new byte[] { 9 }, "poison");
        await queue.SendAsync(new byte[] { 1 }, "good");

        var seen = new List<(string, int)>();
        for (var i = 0; i < 3; i++)
        {
            var poison = (await queue.ReceiveAsync())!;
            seen.Add((poison.MessageId, poison.DeliveryCount));
            if (i < 2)
            {
                await poison.AbandonAsync(); // within its long lock, however slow the machine
                if (i == 1)
                {
                    // The last delivery gets a short lock, only to be waited out.
                    await transport.CreateQueueAsync(name, new PostgreSqlQueueOptions { LockDuration = ShortLock, MaxDeliveryCount = 3 });
                }
            }
            else
            {
                await Task.Delay(ShortLock + TimeSpan.FromMilliseconds(100)); // the last delivery's lock expires
            }
        }

        var good = (await queue.ReceiveAsync())!;
        good.MessageId.Should().Be("good", "the exhausted message went to the dead-letter table and the receive went on");
        await good.CompleteAsync();
        seen.Should().Equal(("poison", 1), ("poison", 2), ("poison", 3));

        var dead = await queue.GetDeadLettersAsync();
        dead.Should().ContainSingle().Which.Should().BeEquivalentTo(new { MessageId = "poison", Reason = PostgreSqlQueue.MaxDeliveryCountExceededReason, DeliveryCount = 3 });
        dead[0].Body.ToArray().Should().Equal(9);
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(0, 0, 1));
    }

    [PostgresFact]
    public async Task DeadLetter_ByTheHandler_KeepsTheReason()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("deadletter"));
        await queue.SendAsync(new byte[] { 1 }, "m1");
        var message = (await queue.ReceiveAsync())!;
        await message.DeadLetterAsync("cannot parse");
        await FluentActions.Awaiting(() => message.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        (await queue.GetDeadLettersAsync()).Should().ContainSingle().Which.Should().BeEquivalentTo(new { MessageId = "m1", Reason = "cannot parse", DeliveryCount = 1 });
    }

    [PostgresFact]
    public async Task SendBatch_KeepsOrder_AndCreateQueueIsIdempotent()
    {
        await using var transport = PostgresServer.CreateTransport();
        var name = PostgresServer.UniqueName("batch");
        var queue = await transport.CreateQueueAsync(name);
        var ids = await queue.SendBatchAsync(Enumerable.Range(0, 50).Select(i => new PostgreSqlMessage(BitConverter.GetBytes(i), $"m{i}")));
        ids.Should().Equal(Enumerable.Range(0, 50).Select(i => $"m{i}"));
        await transport.MigrateAsync();
        var again = await transport.CreateQueueAsync(name, new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromSeconds(5), MaxDeliveryCount = 2 });
        again.Should().BeEquivalentTo(new { LockDuration = TimeSpan.FromSeconds(5), MaxDeliveryCount = 2 });
        (await transport.GetQueueAsync(name)).LockDuration.Should().Be(TimeSpan.FromSeconds(5));
        (await queue.GetStatisticsAsync()).Visible.Should().Be(50, "re-creating a queue keeps its messages");

        var order = new List<string>();
        while (await queue.ReceiveAsync() is { } message)
        {
            order.Add(message.MessageId);
            await message.CompleteAsync();
        }

        order.Should().Equal(ids);
        (await transport.DeleteQueueAsync(name)).Should().BeTrue();
    }

    [PostgresFact]
    public async Task IdleReceive_WakesOnNotify_WellBeforeThePollInterval()
    {
        // Only LISTEN/NOTIFY can end this receive before PollInterval: the wait and the poll are both 20 minutes, so
        // "before the poll" is a claim about the order of events that holds at any load, not a time budget.
        var poll = TimeSpan.FromMinutes(20);
        await using var transport = PostgresServer.CreateTransport(new PostgreSqlTransportOptions { ReceiveWaitTime = poll, PollInterval = poll });
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("notify"));
        (await queue.ReceiveAsync(TimeSpan.FromMilliseconds(300))).Should().BeNull("nothing was sent: the wait ends empty");

        var watch = System.Diagnostics.Stopwatch.StartNew();
        var receive = queue.ReceiveAsync();
        await Task.Delay(500);
        receive.IsCompleted.Should().BeFalse("the receive waits for a message");
        await queue.SendAsync(new byte[] { 1 }, "woken");
        var message = await receive.WaitAsync(Bounded.Patient);
        watch.Stop();
        message!.MessageId.Should().Be("woken");
        watch.Elapsed.Should().BeLessThan(poll, "LISTEN/NOTIFY woke the receive, not the poll");
        await message.CompleteAsync();
    }

    [PostgresFact]
    public async Task IdleReceive_Canceled_ThrowsOperationCanceled()
    {
        await using var transport = PostgresServer.CreateTransport(new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.FromSeconds(30) });
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("cancel"));
        using var cancellation = new CancellationTokenSource(TimeSpan.FromMilliseconds(300));
        var act = () => queue.ReceiveAsync(cancellation.Token).WaitAsync(Bounded.Patient);
        await act.Should().ThrowAsync<OperationCanceledException>();
    }

    [PostgresFact]
    public async Task ReceiveStatement_TakesABatch_InOrder_WithATokenPerDelivery_AndDeadLettersExhaustedRowsOnTheWay()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("batch_receive"), new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromMinutes(5), MaxDeliveryCount = 1 });
        await queue.SendBatchAsync(Enumerable.Range(0, 7).Select(i => new PostgreSqlMessage(new byte[] { (byte)i }, $"m{i}")));
        var first = (await queue.ReceiveAsync())!;
        await first.AbandonAsync(); // m0 had its only delivery: the next receive moves it to the dead-letter table

        var batch = (await queue.ReceiveBatchAsync(5)).Cast<PostgreSqlLeasedMessage>().ToList();

        // Up to 5: the statement picked the 5 oldest visible rows, moved the exhausted m0 and locked the other 4.
        batch.Select(m => m.MessageId).Should().Equal("m1", "m2", "m3", "m4");
        batch.Select(m => m.LockToken).Should().OnlyHaveUniqueItems();
        batch.Should().OnlyContain(m => m.DeliveryCount == 1);
        (await queue.GetDeadLettersAsync()).Select(d => d.MessageId).Should().Equal("m0");
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(Visible: 2, Locked: 4, DeadLettered: 1));
    }
}
