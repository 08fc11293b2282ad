using PriorityAsync.MessagePump.Tests.Pump;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.Tests.Keeper;

/// <summary>
/// The public lease keeper: a message the user's own loop received is renewed on schedule without a pump;
/// a lost lock cancels the handle's token and is reported once; a renewal refused after the user settled or let go is
/// not a loss; bad input is named and loses nothing. One thread, virtual time.
/// </summary>
public class LeaseKeeperTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Lock = TimeSpan.FromSeconds(30);

    [Fact]
    public void AMessageFromTheUsersOwnLoop_IsRenewedOnSchedule_UntilSettledThroughItsHandle()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock });
        queue.Send(new byte[] { 1 }, "m1");
        LeaseKeeperStatistics? stats = null;
        var renewals = 0;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler);
            var message = (await queue.ReceiveAsync())!;
            var handle = keeper.Keep(message, queue);
            await Task.Delay(TimeSpan.FromSeconds(95), clock); // the user's own long work
            handle.LockedUntil.Should().BeAfter(clock.GetUtcNow(), "the keeper renewed the lock while the work ran");
            renewals = handle.RenewalCount;
            await handle.CompleteAsync();
            await Task.Delay(TimeSpan.FromSeconds(60), clock);
            stats = keeper.GetStatistics();
        });

        renewals.Should().Be(4, "a 30 s lock renewed when 10 s remain: at 20, 40, 60 and 80 s of the 95 s");
        queue.GetStatistics().Should().BeEquivalentTo(new { Renewals = 4, Completed = 1, LeasesLost = 0, LeaseLostErrors = 0, InFlight = 0 });
        stats.Should().BeEquivalentTo(new { Kept = 0, Renewals = 4, RenewCalls = 4, LeasesLost = 0, LastLeaseLostAt = (DateTimeOffset?)null });
        stats!.MinRecentSlack.Should().Be(TimeSpan.FromSeconds(10));
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void ThousandKeptMessages_ThirtySecondLocks_RenewCallsOverSixtySeconds(bool withSource)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock });
        for (var i = 0; i < 1000; i++)
        {
            queue.Send(new byte[] { 1 }, $"m{i}");
        }

        LeaseKeeperStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler);
            var handles = new List<LeaseHandle>();
            while (handles.Count < 1000)
            {
                foreach (var message in await ((IMessageSource)queue).ReceiveBatchAsync(100))
                {
                    handles.Add(keeper.Keep(message, withSource ? queue : null));
                }
            }

            await Task.Delay(TimeSpan.FromSeconds(60), clock);
            stats = keeper.GetStatistics();
            foreach (var handle in handles)
            {
                await handle.CompleteAsync();
            }
        });

        var broker = queue.GetStatistics();
        output.WriteLine($"1000 kept messages, 30 s locks, 60 s, {(withSource ? "native batches" : "one by one")}: {broker.RenewCalls} renew calls, {broker.Renewals} renewals; keeper {stats}");
        broker.Should().BeEquivalentTo(new { Completed = 1000, LeasesLost = 0, LeaseLostErrors = 0 });
        broker.Renewals.Should().Be(2000, "each lock renewed at 20 and 40 s (10 s before it ends); the next falls due at 60 s");
        broker.RenewCalls.Should().Be(withSource ? 20 : 2000, "native batches of at most 100, or one call per renewal");
        stats!.RenewCalls.Should().Be(broker.RenewCalls);
    }

    [Fact]
    public void ALostLock_CancelsTheToken_AndIsReportedOnce()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock });
        queue.Send(new byte[] { 1 }, "m1");
        var logger = new ListLogger();
        var events = new List<LeaseLostEventArgs>();
        LeaseHandle? handle = null;
        LeaseKeeperStatistics? stats = null;
        var canceledAt = DateTimeOffset.MinValue;
        var start = clock.GetUtcNow();
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler, logger: logger);
            keeper.LeaseLost += (_, e) => events.Add(e);
            var message = (await queue.ReceiveAsync())!;
            handle = keeper.Keep(message, queue);
            handle.LeaseLostToken.Register(() => canceledAt = clock.GetUtcNow());
            await message.CompleteAsync(); // settled behind the keeper's back: to the keeper, the lock is gone
            await Task.Delay(TimeSpan.FromSeconds(60), clock);
            stats = keeper.GetStatistics();
        });

        handle!.IsLost.Should().BeTrue();
        handle.IsKept.Should().BeFalse();
        handle.LeaseLostToken.IsCancellationRequested.Should().BeTrue();
        canceledAt.Should().Be(start + TimeSpan.FromSeconds(20), "the first renewal, due 10 s before the 30 s lock ends, found the lock gone");
        events.Should().ContainSingle().Which.Handle.Should().BeSameAs(handle);
        events[0].Exception.Should().BeOfType<LeaseLostException>();
        logger.Entries.Count(e => e.EventId.Id == 22).Should().Be(1, "the lost lease is logged once");
        stats.Should().BeEquivalentTo(new { Kept = 0, LeasesLost = 1, Renewals = 0, RenewCalls = 1, LastLeaseLostAt = (DateTimeOffset?)(start + TimeSpan.FromSeconds(20)) });
    }

    [Fact]
    public void ARenewalRefusedAfterTheUserSettled_IsNotALoss()
    {
        var clock = new VirtualTimeProvider();
        var message = new HeldMessage(clock, Lock);
        var events = 0;
        LeaseKeeperStatistics? stats = null;
        LeaseHandle? handle = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler);
            keeper.LeaseLost += (_, _) => events++;
            handle = keeper.Keep(message);
            await VirtualRun.WaitUntilAsync(() => message.Pending is not null, clock, TimeSpan.FromMinutes(1), TimeSpan.FromMilliseconds(100));
            await handle.CompleteAsync(); // the user settles while the renewal is under way
            message.Pending!.SetException(new LeaseLostException("settled")); // the broker refuses the renewal: the lock went with the settlement
            await Task.Delay(TimeSpan.FromSeconds(60), clock);
            stats = keeper.GetStatistics();
        });

        message.Completed.Should().BeTrue();
        handle!.IsLost.Should().BeFalse();
        handle.LeaseLostToken.IsCancellationRequested.Should().BeFalse();
        events.Should().Be(0);
        stats.Should().BeEquivalentTo(new { Kept = 0, LeasesLost = 0, Renewals = 0, RenewCalls = 1 });
    }

    /// <summary>
    /// A message handed to Keep with its lock already gone (held in a prefetch buffer or behind a starved pool past its
    /// lock) gets a handle lost from the start, not one that looks kept: token canceled, counted, reported once (event,
    /// log event 22); nothing is renewed.
    /// </summary>
    [Fact]
    public void AMessageWhoseLockRanOutBeforeKeep_GetsAHandleLostFromTheStart_CountedAndReportedOnce()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock });
        queue.Send(new byte[] { 1 }, "m1");
        var logger = new ListLogger();
        var events = new List<LeaseLostEventArgs>();
        LeaseHandle? handle = null;
        LeaseKeeperStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler, new LeaseKeeperOptions { Name = "k" }, logger);
            keeper.LeaseLost += (_, e) => events.Add(e);
            var expired = (await queue.ReceiveAsync())!;
            await Task.Delay(Lock, clock);
            handle = keeper.Keep(expired, queue);
            await Task.Delay(TimeSpan.FromSeconds(1), clock);
            stats = keeper.GetStatistics();
        });

        handle!.IsLost.Should().BeTrue();
        handle.IsKept.Should().BeFalse();
        handle.LeaseLostToken.IsCancellationRequested.Should().BeTrue();
        events.Should().ContainSingle().Which.Exception.Should().BeOfType<LeaseLostException>()
            .Which.Message.Should().StartWith("Message m1's lock ran out at");
        logger.Entries.Count(e => e.EventId.Id == 22).Should().Be(1);
        stats.Should().BeEquivalentTo(new { Kept = 0, LeasesLost = 1, RenewCalls = 0 });
        queue.GetStatistics().RenewCalls.Should().Be(0);
    }

    [Fact]
    public void BadInput_IsNamed_AndNothingIsLost()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock });
        queue.Send(new byte[] { 1 }, "m1");
        LeaseKeeperStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler, new LeaseKeeperOptions { Name = "k" });
            var message = (await queue.ReceiveAsync())!;
            var handle = keeper.Keep(message, queue);

            keeper.Invoking(k => k.Keep(null!)).Should().Throw<ArgumentNullException>().WithParameterName("message");
            keeper.Invoking(k => k.Keep(message, queue)).Should().Throw<InvalidOperationException>()
                .WithMessage("Message m1 is kept already by LeaseKeeper 'k'; dispose its handle before keeping it again.");

            handle.Dispose();
            handle.Dispose(); // idempotent
            keeper.GetStatistics().Kept.Should().Be(0);
            var again = keeper.Keep(message, queue); // let go, it may be kept again
            again.IsKept.Should().BeTrue();


            await using (var buffered = new LeaseKeeper(scheduler, new LeaseKeeperOptions { LockRenewalBuffer = Lock }))
            {
                buffered.Invoking(k => k.Keep(again.Message, queue)).Should().Throw<ArgumentException>().WithParameterName("source")
                    .Which.Message.Should().Contain("must be above LeaseKeeperOptions.LockRenewalBuffer");
            }

            stats = keeper.GetStatistics();
            await again.CompleteAsync();
            await keeper.StopAsync();
            keeper.Invoking(k => k.Keep(message)).Should().Throw<ObjectDisposedException>().Which.Message.Should().Contain("LeaseKeeper 'k' has stopped");
        });

        stats.Should().BeEquivalentTo(new { Kept = 1, LeasesLost = 0 });
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, LeaseLostErrors = 0 });
    }

    /// <summary>
    /// A renewal held up past the lock's end (on a starved pool) does not leave the keeper unaware: when the lock's known
    /// expiry passes with the renewal still unanswered, the lease is lost at that instant (event, log event 22,
    /// statistics, the token), and the user's complete through the handle, refused by the broker afterwards, counts
    /// nothing more.
    /// </summary>
    [Fact]
    public void ARenewalUnansweredPastTheLock_IsALostLeaseAtTheExpiry_AndTheRefusedCompleteCountsNothingMore()
    {
        var clock = new VirtualTimeProvider();
        var message = new HeldMessage(clock, Lock);
        var logger = new ListLogger();
        var events = new List<LeaseLostEventArgs>();
        LeaseHandle? handle = null;
        LeaseKeeperStatistics? stats = null;
        Exception? first = null, second = null;
        DateTimeOffset lostAt = default;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler, logger: logger);
            keeper.LeaseLost += (_, e) => events.Add(e);
            var keptAt = clock.GetUtcNow();
            handle = keeper.Keep(message);
            using var registration = handle.LeaseLostToken.Register(() => lostAt = clock.GetUtcNow());
            await VirtualRun.WaitUntilAsync(() => message.Pending is not null, clock, TimeSpan.FromMinutes(1), TimeSpan.FromMilliseconds(100)); // the renewal at 20 s: never answered
            await Task.Delay(TimeSpan.FromSeconds(15), clock);   // the lock ended at 30 s at the broker
            (lostAt - keptAt).Should().Be(Lock, "the lease is lost at the instant its known expiry passed unrenewed");
            message.CompleteFailure = new LeaseLostException("the lock expired");
            first = await Record.ExceptionAsync(() => handle.CompleteAsync());
            second = await Record.ExceptionAsync(() => handle.CompleteAsync());
            await Task.Delay(TimeSpan.FromSeconds(1), clock);
            stats = keeper.GetStatistics();
        });

        first.Should().BeOfType<LeaseLostException>("the user's complete still fails as the broker answered");
        second.Should().BeOfType<LeaseLostException>();
        handle!.IsLost.Should().BeTrue();
        handle.LeaseLostToken.IsCancellationRequested.Should().BeTrue();
        events.Should().ContainSingle().Which.Exception.Should().BeOfType<LeaseLostException>()
            .Which.Message.Should().Contain("ran out at").And.Contain("with no renewal answered");
        logger.Entries.Count(e => e.EventId.Id == 22).Should().Be(1);
        stats.Should().BeEquivalentTo(new { Kept = 0, LeasesLost = 1 });
        stats!.LastLeaseLostAt.Should().NotBeNull();
    }

    /// <summary>
    /// A complete through the handle refused with <see cref="LeaseLostException"/> while the lock was still known to run
    /// (the broker lost it for its own reasons) is a lost lease, counted once: a second complete's refusal is not.
    /// </summary>
    [Fact]
    public void ACompleteThroughTheHandleRefusedBecauseTheLockWasGone_IsALostLease_CountedOnce()
    {
        var clock = new VirtualTimeProvider();
        var message = new HeldMessage(clock, Lock);
        var logger = new ListLogger();
        var events = new List<LeaseLostEventArgs>();
        LeaseHandle? handle = null;
        LeaseKeeperStatistics? stats = null;
        Exception? first = null, second = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler, logger: logger);
            keeper.LeaseLost += (_, e) => events.Add(e);
            handle = keeper.Keep(message);
            await Task.Delay(TimeSpan.FromSeconds(5), clock);
            message.CompleteFailure = new LeaseLostException("the lock expired");
            first = await Record.ExceptionAsync(() => handle.CompleteAsync());
            second = await Record.ExceptionAsync(() => handle.CompleteAsync());
            await Task.Delay(TimeSpan.FromSeconds(1), clock);
            stats = keeper.GetStatistics();
        });

        first.Should().BeOfType<LeaseLostException>("the user's complete still fails as the broker answered");
        second.Should().BeOfType<LeaseLostException>();
        handle!.IsLost.Should().BeTrue();
        handle.LeaseLostToken.IsCancellationRequested.Should().BeTrue();
        events.Should().ContainSingle().Which.Exception.Should().BeSameAs(first);
        logger.Entries.Count(e => e.EventId.Id == 22).Should().Be(1);
        stats.Should().BeEquivalentTo(new { Kept = 0, LeasesLost = 1 });
        stats!.LastLeaseLostAt.Should().NotBeNull();
    }

    [Fact]
    public void ASecondCompleteThroughTheHandle_AfterOneThatSucceeded_IsNoLostLease()
    {
        var clock = new VirtualTimeProvider();
        var message = new HeldMessage(clock, Lock);
        var events = 0;
        LeaseKeeperStatistics? stats = null;
        Exception? second = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler);
            keeper.LeaseLost += (_, _) => events++;
            var handle = keeper.Keep(message);
            await handle.CompleteAsync();
            message.CompleteFailure = new LeaseLostException("already settled");
            second = await Record.ExceptionAsync(() => handle.CompleteAsync());
            await Task.Delay(TimeSpan.FromSeconds(1), clock);
            stats = keeper.GetStatistics();
        });

        second.Should().BeOfType<LeaseLostException>();
        events.Should().Be(0);
        stats.Should().BeEquivalentTo(new { Kept = 0, LeasesLost = 0 });
    }

    /// <summary>
    /// A message settled through its handle keeps its LockedUntil (the transports do not move it), so keeping it again
    /// would be accepted, and its first renewal, refused, would count a lost lease (the LeaseLost event, log event 22,
    /// the health check Degraded for 5 minutes) for a message the user had completed. Keep refuses it, naming the
    /// message.
    /// </summary>
    [Theory]
    [InlineData("complete")]
    [InlineData("abandon")]
    [InlineData("dead-letter")]
    public void KeepingAMessageSettledThroughItsHandle_IsRefused_AndNothingIsCountedLost(string settle)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock });
        queue.Send(new byte[] { 1 }, "m1");
        var events = 0;
        LeaseKeeperStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler, new LeaseKeeperOptions { Name = "k" });
            keeper.LeaseLost += (_, _) => events++;
            var message = (await queue.ReceiveAsync())!;
            var handle = keeper.Keep(message, queue);
            await (settle switch
            {
                "complete" => handle.CompleteAsync(),
                "abandon" => handle.AbandonAsync(),
                _ => handle.DeadLetterAsync("poison"),
            });

            keeper.Invoking(k => k.Keep(message, queue)).Should().Throw<ArgumentException>().WithParameterName("message")
                .WithMessage("Message m1 was settled through its LeaseHandle of LeaseKeeper 'k' already: there is nothing to keep.*");
            await Task.Delay(TimeSpan.FromSeconds(60), clock);
            stats = keeper.GetStatistics();
        });

        events.Should().Be(0);
        stats.Should().BeEquivalentTo(new { Kept = 0, LeasesLost = 0, RenewCalls = 0 });
        queue.GetStatistics().LeaseLostErrors.Should().Be(0);
    }

    /// <summary>
    /// A message kept with a source it was not received from makes the source's RenewBatchAsync throw ArgumentException
    /// for the whole batch; retried until the locks ran out, that batch would lose every lease that fell due with it. So
    /// the batch's leases are renewed alone (each through its own message), the misuse is reported (event 34), and
    /// nothing is lost.
    /// </summary>
    [Fact]
    public void AMessageKeptWithTheWrongSource_DoesNotLoseTheLeasesRenewedBesideIt()
    {
        var clock = new VirtualTimeProvider();
        var transport = new InMemoryTransport(clock);
        var orders = transport.CreateQueue("orders", new InMemoryQueueOptions { LockDuration = Lock });
        var other = transport.CreateQueue("other", new InMemoryQueueOptions { LockDuration = Lock });
        orders.Send(new byte[] { 1 }, "m1");
        other.Send(new byte[] { 2 }, "o1");
        var logger = new ListLogger();
        var lost = new List<string>();
        LeaseHandle? mine = null, foreign = null;
        LeaseKeeperStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler, logger: logger);
            keeper.LeaseLost += (_, e) => lost.Add(e.Handle.Message.MessageId);
            mine = keeper.Keep((await orders.ReceiveAsync())!, orders);
            foreign = keeper.Keep((await other.ReceiveAsync())!, orders); // the wrong source: o1 came from 'other'
            await Task.Delay(TimeSpan.FromSeconds(95), clock);
            stats = keeper.GetStatistics();
            await mine.CompleteAsync();
            await foreign.CompleteAsync();
        });

        lost.Should().BeEmpty("each lease is renewed alone through its own message once the batch call refused the batch");
        mine!.RenewalCount.Should().Be(4, "a 30 s lock renewed when 10 s remain: at 20, 40, 60 and 80 s of the 95 s");
        foreign!.RenewalCount.Should().Be(4);
        stats.Should().BeEquivalentTo(new { LeasesLost = 0, Renewals = 8 });
        logger.Entries.Count(e => e.EventId.Id == 34).Should().Be(4, "each refused batch is reported once");
        orders.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, LeasesLost = 0, LeaseLostErrors = 0 });
        other.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, LeasesLost = 0, LeaseLostErrors = 0 });
    }

    /// <summary>
    /// Where to take a receive's reply (docs/lease-keeper.md, "Take the receive's reply in the lease lane"): a receive
    /// awaited in the Receive lane resumes only when no processing work is ready, with the lock running since the
    /// broker took it; behind 10 s of CPU-heavy handler slices a 5 s lock is gone before Keep. The same receive started
    /// in the keeper's lease lane resumes ahead of the handlers and is kept with its lock nearly whole.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void AReceiveReplyTakenInTheReceiveLane_CanLoseItsLockBeforeKeep_InTheLeaseLaneItIsKept(bool inLeaseLane)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(5), Latency = TimeSpan.FromMilliseconds(10) });
        queue.Send(new byte[] { 1 }, "m1");
        Exception? failure = null;
        LeaseHandle? handle = null;
        var renewals = 0;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler);
            Task? handler = null;
            await scheduler.GetLane(LanePriority.Receive).Run(async () =>
            {
                // The receive goes out; while its reply is on its way a CPU-heavy handler starts (10 slices of 1 s).
                var inLease = inLeaseLane ? keeper.LeaseLane.Run(async () => keeper.Keep((await queue.ReceiveAsync())!, queue)) : null;
                var plain = inLeaseLane ? null : queue.ReceiveAsync();
                handler = scheduler.GetLane(LanePriority.Processing).Run(async () =>
                {
                    for (var slice = 0; slice < 10; slice++)
                    {
                        clock.Advance(TimeSpan.FromSeconds(1)); // a second of CPU work holding the only thread
                        await Task.Yield();                     // then back into the Processing lane
                    }
                });
                try
                {
                    handle = inLease is not null ? await inLease : keeper.Keep((await plain!)!, queue);
                }
                catch (ArgumentException ex)
                {
                    failure = ex;
                }
            });
            await handler!;
            renewals = handle!.RenewalCount;
            if (!handle.IsLost)
            {
                await handle.CompleteAsync();
            }
        });

        failure.Should().BeNull();
        if (inLeaseLane)
        {
            renewals.Should().BeGreaterThan(0, "kept while the handler's 10 s ran");
            queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, LeasesLost = 0 });
        }
        else
        {
            handle!.IsLost.Should().BeTrue("the reply waited behind the handler's slices past the lock: the handle is lost from the start");
            handle.LeaseLostToken.IsCancellationRequested.Should().BeTrue();
            renewals.Should().Be(0);
        }
    }

    [Fact]
    public async Task AKeeperWhoseSchedulerHasStopped_RefusesToKeep_NamingWhy()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock });
        queue.Send(new byte[] { 1 }, "m1");
        var message = (await queue.ReceiveAsync())!;
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ShutdownTimeout = TimeSpan.Zero }); // the keeper's loop is still in it: no wait for it
        var keeper = new LeaseKeeper(scheduler);
        await scheduler.DisposeAsync();

        keeper.Invoking(k => k.Keep(message)).Should().Throw<ObjectDisposedException>().Which.Message.Should().Contain("has been disposed and accepts no new work");
        ((Action)(() => _ = new LeaseKeeper(scheduler))).Should().Throw<ObjectDisposedException>();
        keeper.GetStatistics().Kept.Should().Be(0);
        await keeper.DisposeAsync();
    }

    /// <summary>A message whose renewals wait for the test's answer.</summary>
    private sealed class HeldMessage(TimeProvider clock, TimeSpan lockDuration) : ILeasedMessage
    {
        public TaskCompletionSource<DateTimeOffset>? Pending { get; private set; }

        public bool Completed { get; private set; }

        public string MessageId => "held";

        public ReadOnlyMemory<byte> Body => ReadOnlyMemory<byte>.Empty;

        public int DeliveryCount => 1;

        public DateTimeOffset LockedUntil { get; } = clock.GetUtcNow() + lockDuration;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
        {
            Pending = new TaskCompletionSource<DateTimeOffset>();
            return Pending.Task;
        }

        public Exception? CompleteFailure { get; set; }

        public Task CompleteAsync(CancellationToken cancellationToken = default)
        {
            if (CompleteFailure is { } failure)
            {
                return Task.FromException(failure);
            }

            Completed = true;
            return Task.CompletedTask;
        }

        public Task AbandonAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => Task.CompletedTask;
    }
}
