using System.Diagnostics;
using PriorityAsync.MessagePump.PostgreSql.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Transport;

/// <summary>
/// The native batch calls of <see cref="PostgreSqlQueue"/>: a batch receive is one receive statement (waiting like the
/// single receive, but only for a first message), a batch complete is one statement with an outcome per message.
/// </summary>
public class BatchTests(ITestOutputHelper output)
{
    [PostgresFact]
    public async Task ReceiveBatch_ReturnsAtMostMax_OldestFirst_EachWithItsOwnLock()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("batch_order"));
        await queue.SendBatchAsync(Enumerable.Range(0, 7).Select(i => new PostgreSqlMessage(new byte[] { (byte)i }, $"m{i}")));

        var first = (await queue.ReceiveBatchAsync(5)).Cast<PostgreSqlLeasedMessage>().ToList();
        var second = (await queue.ReceiveBatchAsync(5)).Cast<PostgreSqlLeasedMessage>().ToList();

        first.Select(m => m.MessageId).Should().Equal("m0", "m1", "m2", "m3", "m4");
        first.Select(m => m.SequenceNumber).Should().BeInAscendingOrder();
        first.Select(m => (int)m.Body.Span[0]).Should().Equal(0, 1, 2, 3, 4);
        second.Select(m => m.MessageId).Should().Equal("m5", "m6");
        first.Concat(second).Select(m => m.LockToken).Should().OnlyHaveUniqueItems();
        first.Concat(second).Should().OnlyContain(m => m.DeliveryCount == 1 && m.LockedUntil > DateTimeOffset.UtcNow);
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(Visible: 0, Locked: 7, DeadLettered: 0));
        (await queue.ReceiveBatchAsync(5)).Should().BeEmpty("every message is locked");
    }

    [PostgresFact]
    public async Task ReceiveBatch_ThroughTheInterface_IsTheNativeCall()
    {
        // The default implementation of IMessageSource returns at most one message: five means the queue's own call ran.
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("batch_iface"));
        await queue.SendBatchAsync(Enumerable.Range(0, 6).Select(i => new PostgreSqlMessage(new byte[] { (byte)i }, $"m{i}")));
        IMessageSource source = queue;

        var batch = await source.ReceiveBatchAsync(5);
        batch.Select(m => m.MessageId).Should().Equal("m0", "m1", "m2", "m3", "m4");

        var outcomes = await source.CompleteBatchAsync(batch);
        outcomes.Should().HaveCount(5).And.OnlyContain(o => o == null);
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(Visible: 1, Locked: 0, DeadLettered: 0));
    }

    [PostgresFact]
    public async Task ReceiveBatch_OnAnEmptyQueue_WaitsReceiveWaitTime_ThenReturnsNone()
    {
        await using var transport = PostgresServer.CreateTransport(new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.FromMilliseconds(600), PollInterval = TimeSpan.FromMilliseconds(100) });
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("batch_empty"));

        var watch = Stopwatch.StartNew();
        var batch = await queue.ReceiveBatchAsync(10);
        watch.Stop();

        batch.Should().BeEmpty();
        watch.Elapsed.Should().BeGreaterThanOrEqualTo(TimeSpan.FromMilliseconds(550), "it waited (and polled) for the whole ReceiveWaitTime");
        (await queue.ReceiveBatchAsync(10, TimeSpan.Zero)).Should().BeEmpty("a zero wait looks once");
    }

    [PostgresFact]
    public async Task ReceiveBatch_ReturnsAsSoonAsOneMessageIsThere_WithoutWaitingToFillTheBatch()
    {
        // The wait and the poll are 20 minutes: a receive that returns before them did not wait to fill its batch and was
        // not woken by the poll. Orderings against what the receive would otherwise do, not time budgets: they hold at
        // any load (the generous bound only turns a hang into a failure).
        var wait = TimeSpan.FromMinutes(20);
        await using var transport = PostgresServer.CreateTransport(new PostgreSqlTransportOptions { ReceiveWaitTime = wait, PollInterval = wait });
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("batch_early"));

        // One message already there: taken at once, the rest of the wait is not spent on filling the batch.
        await queue.SendAsync(new byte[] { 1 }, "there");
        var watch = Stopwatch.StartNew();
        var batch = await queue.ReceiveBatchAsync(100).WaitAsync(Bounded.Patient);
        watch.Stop();
        batch.Select(m => m.MessageId).Should().Equal("there");
        watch.Elapsed.Should().BeLessThan(wait, "it returned with one message instead of waiting to fill the batch");

        // An empty queue: the NOTIFY of one send wakes the waiting batch receive (the poll is 20 minutes away).
        var receive = queue.ReceiveBatchAsync(100);
        await Task.Delay(300);
        receive.IsCompleted.Should().BeFalse("the queue is empty, so the receive waits");
        watch.Restart();
        await queue.SendAsync(new byte[] { 2 }, "woken");
        var woken = await receive.WaitAsync(Bounded.Patient);
        watch.Stop();
        woken.Select(m => m.MessageId).Should().Equal("woken");
        watch.Elapsed.Should().BeLessThan(wait, "LISTEN/NOTIFY woke it and it returned with one message");
    }

    [PostgresFact]
    public async Task CompleteBatch_MixOfValidExpiredRelockedAndSettled_GetsEachItsOutcome_InOrder()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("batch_mix"), new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromMinutes(5) });
        await queue.SendBatchAsync(Enumerable.Range(0, 5).Select(i => new PostgreSqlMessage(new byte[] { (byte)i }, $"m{i}")));
        var m = (await queue.ReceiveBatchAsync(5)).Cast<PostgreSqlLeasedMessage>().ToArray();

        await m[2].CompleteAsync(); // m2: already settled
        await ExpireAsync(m[3]);    // m3: expired, then delivered again under a new token
        var m3Again = (PostgreSqlLeasedMessage)(await queue.ReceiveBatchAsync(10)).Single();
        m3Again.MessageId.Should().Be("m3");
        m3Again.DeliveryCount.Should().Be(2);
        await ExpireAsync(m[1]);    // m1: expired on the server's clock, not received again
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(Visible: 1, Locked: 3, DeadLettered: 0));

        ILeasedMessage[] batch = [m[0], m[1], m[2], m[3], m[4], m3Again, m[0]];
        var outcomes = await queue.CompleteBatchAsync(batch);

        outcomes.Should().HaveCount(7);
        outcomes[0].Should().BeNull();
        outcomes[1].Should().BeOfType<LeaseLostException>("its lock expired on the server's clock");
        outcomes[2].Should().BeOfType<LeaseLostException>("it was already completed");
        outcomes[3].Should().BeOfType<LeaseLostException>("a newer delivery holds the message");
        outcomes[4].Should().BeNull();
        outcomes[5].Should().BeNull("the newer delivery's token holds the lock");
        outcomes[6].Should().BeOfType<LeaseLostException>("the first entry of the same delivery completed it");

        // The wording of the single complete, for the same message in the same state.
        var single = await FluentActions.Awaiting(() => m[2].CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        outcomes[2]!.Message.Should().Be(single.Which.Message).And.StartWith($"Cannot complete {m[2]}: the lock expired");

        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(Visible: 1, Locked: 0, DeadLettered: 0), "only m1 is left, visible");
        var left = (PostgreSqlLeasedMessage)(await queue.ReceiveBatchAsync(10)).Single();
        left.MessageId.Should().Be("m1");
        left.DeliveryCount.Should().Be(2);
        (await queue.CompleteBatchAsync([left])).Should().ContainSingle().Which.Should().BeNull();
        (await queue.GetStatisticsAsync()).Pending.Should().Be(0);
    }

    [PostgresFact]
    public async Task CompleteBatch_SameQueueOpenedTwice_IsTheSameQueue()
    {
        await using var transport = PostgresServer.CreateTransport();
        var name = PostgresServer.UniqueName("batch_twice");
        var queue = await transport.CreateQueueAsync(name);
        var again = await transport.GetQueueAsync(name);
        await queue.SendAsync(new byte[] { 1 });

        var batch = await queue.ReceiveBatchAsync(1);
        (await again.CompleteBatchAsync(batch)).Should().ContainSingle().Which.Should().BeNull();
        (await queue.GetStatisticsAsync()).Pending.Should().Be(0);
    }

    [PostgresFact]
    public async Task CompleteBatch_ConnectionTerminated_IsTransient_ForTheWholeCall_AndCompletesNothing()
    {
        var application = PostgresServer.UniqueName("batch_terminate");
        await using var transport = PostgresServer.CreateTransport(connectionString: PostgresServer.WithApplicationName(application));
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("batch_transient"));
        await queue.SendBatchAsync(Enumerable.Range(0, 3).Select(i => new PostgreSqlMessage(new byte[] { (byte)i }, $"m{i}")));
        var batch = await queue.ReceiveBatchAsync(3);
        ((long)(await PostgresServer.ScalarAsync("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = @a", ("a", application)))!)
            .Should().BeGreaterThanOrEqualTo(1L);

        // Waited for, not slept for: the server has ended the backend, so the pooled connection is dead at any load.
        await Bounded.UntilAsync(
            async () => (long)(await PostgresServer.ScalarAsync("SELECT count(*) FROM pg_stat_activity WHERE application_name = @a", ("a", application)))! == 0,
            Bounded.Patient,
            "the end of the terminated backend");

        var thrown = await FluentActions.Awaiting(() => queue.CompleteBatchAsync(batch)).Should().ThrowAsync<TransientTransportException>();
        thrown.Which.Message.Should().Contain("Completing 3 message(s)");
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(Visible: 0, Locked: 3, DeadLettered: 0), "the failed call completed nothing");
        (await queue.CompleteBatchAsync(batch)).Should().HaveCount(3).And.OnlyContain(o => o == null, "the retry completes them all");
        (await queue.GetStatisticsAsync()).Pending.Should().Be(0);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    [InlineData(int.MinValue)]
    public async Task ReceiveBatch_MaxMessagesNotPositive_Throws_NamingIt(int maxMessages)
    {
        await using var transport = new PostgreSqlTransport("Host=127.0.0.1;Port=1;Timeout=1");
        var queue = CreateOffline(transport, "orders");
        FluentActions.Invoking(() => { _ = queue.ReceiveBatchAsync(maxMessages); }).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("maxMessages");
        FluentActions.Invoking(() => { _ = queue.ReceiveBatchAsync(maxMessages, TimeSpan.Zero); }).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("maxMessages");
        FluentActions.Invoking(() => { _ = ((IMessageSource)queue).ReceiveBatchAsync(maxMessages); }).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("maxMessages");
    }

    [Fact]
    public async Task ReceiveBatch_NegativeWait_Throws_NamingIt()
    {
        await using var transport = new PostgreSqlTransport("Host=127.0.0.1;Port=1;Timeout=1");
        var queue = CreateOffline(transport, "orders");
        FluentActions.Invoking(() => { _ = queue.ReceiveBatchAsync(10, TimeSpan.FromMilliseconds(-1)); }).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("maxWaitTime");
    }

    [Fact]
    public async Task CompleteBatch_NullOrEmpty_Throws_NamingIt_BeforeAnyStatement()
    {
        // A server that does not exist: the batch must be rejected before anything is sent.
        await using var transport = new PostgreSqlTransport("Host=127.0.0.1;Port=1;Timeout=1");
        var queue = CreateOffline(transport, "orders");

        var nullList = FluentActions.Invoking(() => { _ = queue.CompleteBatchAsync(null!); }).Should().Throw<ArgumentNullException>().Which;
        nullList.ParamName.Should().Be("messages");
        var empty = FluentActions.Invoking(() => { _ = queue.CompleteBatchAsync([]); }).Should().Throw<ArgumentException>().Which;
        empty.ParamName.Should().Be("messages");
        empty.Message.Should().Contain("at least one message");
        var nullItem = FluentActions.Invoking(() => { _ = queue.CompleteBatchAsync([Offline(queue, 1), null!]); }).Should().Throw<ArgumentNullException>().Which;
        nullItem.ParamName.Should().Be("messages");
        nullItem.Message.Should().Contain("index 1");

        // The check is a copy of the abstraction's (internal to the PriorityAsync.MessagePump assembly): the same messages as the
        // in-memory queue, which uses the original.
        var inMemory = new InMemoryTransport().CreateQueue("orders");
        inMemory.Send(new byte[] { 1 });
        var inMemoryMessage = (await inMemory.ReceiveAsync())!;
        FluentActions.Invoking(() => { _ = inMemory.CompleteBatchAsync(null!); }).Should().Throw<ArgumentNullException>().Which.Message.Should().Be(nullList.Message);
        FluentActions.Invoking(() => { _ = inMemory.CompleteBatchAsync([]); }).Should().Throw<ArgumentException>().Which.Message.Should().Be(empty.Message);
        FluentActions.Invoking(() => { _ = inMemory.CompleteBatchAsync([inMemoryMessage, null!]); }).Should().Throw<ArgumentNullException>().Which.Message.Should().Be(nullItem.Message);
    }

    [Fact]
    public async Task CompleteBatch_MessageOfAnotherQueueOrTransport_Throws_NamingItsIndex_BeforeAnyStatement()
    {
        await using var transport = new PostgreSqlTransport("Host=127.0.0.1;Port=1;Timeout=1");
        await using var otherTransport = new PostgreSqlTransport("Host=127.0.0.1;Port=1;Timeout=1");
        var queue = CreateOffline(transport, "orders");
        var otherQueue = CreateOffline(transport, "invoices");
        var sameNameElsewhere = CreateOffline(otherTransport, "orders");
        var broker = new InMemoryTransport();
        var inMemory = broker.CreateQueue("orders");
        inMemory.Send(new byte[] { 1 });
        var inMemoryMessage = (await inMemory.ReceiveAsync())!;

        foreach (var (foreign, index) in new (ILeasedMessage, int)[] { (Offline(otherQueue, 2), 1), (Offline(sameNameElsewhere, 3), 2), (inMemoryMessage, 1) })
        {
            ILeasedMessage[] batch = index == 1 ? [Offline(queue, 1), foreign] : [Offline(queue, 1), Offline(queue, 4), foreign];
            var thrown = FluentActions.Invoking(() => { _ = queue.CompleteBatchAsync(batch); }).Should().Throw<ArgumentException>().Which;
            thrown.ParamName.Should().Be("messages");
            thrown.Message.Should().Contain($"index {index}").And.Contain(foreign.ToString());
        }
    }

    [PostgresFact]
    public async Task CompleteBatch_RacingRenewalsAndExpiry_EveryOutcomeAgreesWithTheTable()
    {
        // Half the batch is renewed in a loop, half left to expire; the batch complete is sent around the moment the
        // unrenewed locks run out. Whatever the timing, a message reported completed is gone, a message reported lost is
        // still there (visible again, never completed twice), and the renewals that came after the complete all fail.
        var lockDuration = TimeSpan.FromMilliseconds(600);
        await using var transport = PostgresServer.CreateTransport();
        foreach (var delay in new[] { 450, 550, 600, 650, 750 })
        {
            var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("batch_race"), new PostgreSqlQueueOptions { LockDuration = lockDuration });
            await queue.SendBatchAsync(Enumerable.Range(0, 40).Select(i => new PostgreSqlMessage(new byte[] { (byte)i }, $"m{i}")));
            var batch = (await queue.ReceiveBatchAsync(40)).Cast<PostgreSqlLeasedMessage>().ToArray();
            batch.Should().HaveCount(40);

            using var stopRenewing = new CancellationTokenSource();
            var renewer = RenewEvenAsync(batch, stopRenewing.Token);
            await Task.Delay(delay);
            var outcomes = await queue.CompleteBatchAsync(batch);
            var completeReturned = Stopwatch.GetTimestamp();
            await Task.Delay(250); // let the renewer try once or twice more
            await stopRenewing.CancelAsync();
            var renewalsSent = await renewer;

            outcomes.Should().HaveCount(40).And.OnlyContain(o => o == null || o is LeaseLostException);
            var stillThere = new List<bool>();
            foreach (var message in batch)
            {
                stillThere.Add((long)(await PostgresServer.ScalarAsync("SELECT count(*) FROM priorityasync.messages WHERE id = @id", ("id", message.SequenceNumber)))! == 1);
            }

            stillThere.Should().Equal(outcomes.Select(o => o is not null), $"after {delay} ms: completed exactly when reported completed");
            var lost = outcomes.Count(o => o is not null);
            output.WriteLine($"complete sent after {delay} ms of a {lockDuration.TotalMilliseconds} ms lock: {40 - lost} completed, {lost} lost (of them renewed: {outcomes.Where((o, i) => o is not null && i % 2 == 0).Count()}), {renewalsSent.Count} renewals");
            (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(Visible: lost, Locked: 0, DeadLettered: 0), "a lost lock had expired, so its message is visible");
            renewalsSent.Should().NotContain(sent => sent > completeReturned, "no renewal sent after the complete returned can succeed: the message is gone or its lock expired");

            var again = await queue.ReceiveBatchAsync(100, TimeSpan.FromSeconds(2));
            again.Select(m => m.MessageId).Should().BeEquivalentTo(batch.Where((_, i) => outcomes[i] is not null).Select(m => m.MessageId), "only the lost ones come again");
            await transport.DeleteQueueAsync(queue.Name);
        }

        // Renews every even message in a loop; returns when each successful renewal was sent (Stopwatch timestamps).
        static async Task<List<long>> RenewEvenAsync(PostgreSqlLeasedMessage[] batch, CancellationToken stop)
        {
            var succeeded = new List<long>();
            while (!stop.IsCancellationRequested)
            {
                for (var i = 0; i < batch.Length; i += 2)
                {
                    try
                    {
                        var sent = Stopwatch.GetTimestamp();
                        await batch[i].RenewLockAsync(CancellationToken.None);
                        succeeded.Add(sent);
                    }
                    catch (LeaseLostException)
                    {
                        // Completed, or its lock lapsed under load: both are outcomes the check above accounts for.
                    }
                }

                await Task.Delay(TimeSpan.FromMilliseconds(100), CancellationToken.None);
            }

            return succeeded;
        }
    }

    /// <summary>Ends the lock of <paramref name="message"/> on the server's clock (as if its lock duration had passed).</summary>
    private static Task ExpireAsync(PostgreSqlLeasedMessage message) => PostgresServer.ScalarAsync(
        "UPDATE priorityasync.messages SET locked_until = clock_timestamp() - interval '1 millisecond' WHERE id = @id AND lock_token = @token",
        ("id", message.SequenceNumber),
        ("token", message.LockToken));

    private static PostgreSqlQueue CreateOffline(PostgreSqlTransport transport, string name) =>
        new(transport, name, TimeSpan.FromMinutes(1), 10);

    private static PostgreSqlLeasedMessage Offline(PostgreSqlQueue queue, long id) =>
        new(queue, id, $"m{id}", [], DateTimeOffset.UtcNow, 1, Guid.NewGuid(), DateTimeOffset.UtcNow.AddMinutes(1), DateTimeOffset.UtcNow.AddMinutes(1));
}
