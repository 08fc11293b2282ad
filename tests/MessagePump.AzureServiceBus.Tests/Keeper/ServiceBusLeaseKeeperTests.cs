using System.Text;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Keeper;

/// <summary>
/// A <see cref="LeaseKeeper"/> keeping the messages of the SDK's own consumers (<see cref="ServiceBusLeaseKeeperExtensions"/>):
/// a <see cref="ServiceBusProcessor"/>'s handler, a <see cref="ServiceBusSessionProcessor"/>'s and a
/// <see cref="ServiceBusReceiver"/> loop, on the test broker on virtual time (the broker judges locks on the virtual
/// clock, the keeper schedules its renewals on it; the client's calls are real).
/// </summary>
public sealed class ServiceBusLeaseKeeperTests
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan Step = TimeSpan.FromSeconds(1);

    [Fact]
    public async Task A_processor_with_its_own_renewal_off_keeps_its_message_past_three_lock_durations_through_the_keeper()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration });
        queue.Send("x"u8.ToArray(), "x");
        await using var kept = await KeeperRig.StartAsync(sb);
        await using var processor = sb.Transport.Client.CreateProcessor("orders", ProcessorOptions());
        var handler = new HandlerProbe();
        processor.ProcessMessageAsync += async args =>
        {
            using var lease = kept.Keeper.Keep(args, processor);
            await handler.HoldAsync(lease);
            await args.CompleteMessageAsync(args.Message, CancellationToken.None);
            handler.Completed.TrySetResult();
        };
        processor.ProcessErrorAsync += _ => Task.CompletedTask;
        await processor.StartProcessingAsync();
        var lease = await handler.Entered.Task.WaitAsync(SbHarness.HangBound);

        await KeepAdvancingAsync(sb.VirtualClock, lease, LockDuration * 3.5);
        handler.Release.SetResult();
        await handler.Completed.Task.WaitAsync(SbHarness.HangBound);
        await processor.StopProcessingAsync();

        queue.CompletionsOf("x").Should().Be(1, "the lock was held for 3.5 lock durations, renewed by the keeper alone");
        queue.RenewCount.Should().BeGreaterThanOrEqualTo(3);
        lease.IsLost.Should().BeFalse();
        kept.Lost.Should().BeEmpty();
    }

    [Fact]
    public async Task A_lock_lost_under_a_processor_s_handler_cancels_the_lease_token_and_is_reported_once()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration, MaxDeliveryCount = 5 });
        queue.Send("x"u8.ToArray(), "x");
        await using var kept = await KeeperRig.StartAsync(sb);
        await using var processor = sb.Transport.Client.CreateProcessor("orders", ProcessorOptions());
        var handler = new HandlerProbe();
        processor.ProcessMessageAsync += async args =>
        {
            if (args.Message.DeliveryCount > 1)
            {
                return; // the redelivery after the loss: not kept
            }

            using var lease = kept.Keeper.Keep(args, processor);
            await handler.HoldAsync(lease);
        };
        processor.ProcessErrorAsync += _ => Task.CompletedTask;
        await processor.StartProcessingAsync();
        var lease = await handler.Entered.Task.WaitAsync(SbHarness.HangBound);

        sb.VirtualClock.Advance(LockDuration + Step); // the broker's lock runs out before the keeper can renew it

        await Bounded.UntilAsync(() => Task.FromResult(lease.LeaseLostToken.IsCancellationRequested), SbHarness.HangBound, "the lease token canceled");
        await Bounded.UntilAsync(() => Task.FromResult(kept.Lost.Count == 1), SbHarness.HangBound, "the loss reported");
        handler.Release.SetResult();
        await processor.StopProcessingAsync();

        lease.IsLost.Should().BeTrue();
        kept.Lost.Should().ContainSingle().Which.Should().Be("x");
        kept.Keeper.GetStatistics().LeasesLost.Should().Be(1);
    }

    [Fact]
    public async Task A_message_the_handler_completed_through_its_args_while_kept_is_reported_lost_when_the_next_renewal_is_refused()
    {
        // The SDK has no public "settled" state: a settlement through the args while the handle is kept is not seen, and
        // the broker's refusal of the next renewal is reported as a lost lock (the safe side; the docs say to settle
        // through the handle, or dispose it first).
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration });
        queue.Send("x"u8.ToArray(), "x");
        await using var kept = await KeeperRig.StartAsync(sb);
        await using var processor = sb.Transport.Client.CreateProcessor("orders", ProcessorOptions());
        var handler = new HandlerProbe();
        processor.ProcessMessageAsync += async args =>
        {
            using var lease = kept.Keeper.Keep(args, processor);
            await args.CompleteMessageAsync(args.Message, CancellationToken.None); // the user's own settlement, handle still kept
            await handler.HoldAsync(lease);
        };
        processor.ProcessErrorAsync += _ => Task.CompletedTask;
        await processor.StartProcessingAsync();
        var lease = await handler.Entered.Task.WaitAsync(SbHarness.HangBound);
        queue.CompletionsOf("x").Should().Be(1);
        var renewsBefore = queue.RenewCount;

        // Time passes, only while the keeper is at rest, until it renews the completed message: the broker refuses it
        // (the lock token is gone), which releases the handle. (Advancing after a fixed real wait for the renewal
        // marched the clock on under a slow one.)
        var end = sb.VirtualClock.GetUtcNow() + LockDuration;
        while (lease.IsKept && sb.VirtualClock.GetUtcNow() < end)
        {
            await Bounded.UntilAsync(() => Task.FromResult(!lease.IsKept || KeeperAtRest(sb.VirtualClock, lease)), SbHarness.HangBound, "the keeper at rest, or the refusal answered", TimeSpan.FromMilliseconds(5));
            if (lease.IsKept)
            {
                var now = sb.VirtualClock.GetUtcNow();
                sb.VirtualClock.Advance(Min(Step, new DateTimeOffset(lease.RenewDueTicks, TimeSpan.Zero) - now));
            }
        }

        queue.RenewCount.Should().BeGreaterThan(renewsBefore, "the keeper renewed the completed message and the broker refused it");
        await Bounded.UntilAsync(() => Task.FromResult(!lease.IsKept), SbHarness.HangBound, "the refusal answered");
        handler.Release.SetResult();
        await processor.StopProcessingAsync();

        lease.IsLost.Should().BeTrue("the keeper cannot see a settlement through the args: the refusal counts as a lost lock");
        lease.LeaseLostToken.IsCancellationRequested.Should().BeTrue();
        kept.Lost.Should().ContainSingle().Which.Should().Be("x");
        kept.Keeper.GetStatistics().LeasesLost.Should().Be(1);
    }

    [Fact]
    public async Task A_renewal_refused_while_the_handle_s_own_complete_waits_for_its_answer_is_not_a_lost_lock()
    {
        // The broker applies the complete at once but answers it 6 s later, and answers renewals 4 s late: the renewal
        // sent just before the complete is refused (the lock is gone) before the complete's answer comes back. The handle
        // stops renewing before it sends the complete, so the refusal is answered after a release.
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration });
        queue.Send("x"u8.ToArray(), "x");
        sb.Broker.Faults.RenewLockDelay = TimeSpan.FromSeconds(4);
        sb.Broker.Faults.SettlementAnswerDelay = TimeSpan.FromSeconds(6);
        await using var kept = await KeeperRig.StartAsync(sb);
        await using var processor = sb.Transport.Client.CreateProcessor("orders", ProcessorOptions());
        var handler = new HandlerProbe();
        processor.ProcessMessageAsync += async args =>
        {
            using var lease = kept.Keeper.Keep(args, processor);
            await handler.HoldAsync(lease);
            await lease.CompleteAsync(CancellationToken.None); // the settlement the keeper sees
            handler.Completed.TrySetResult();
        };
        processor.ProcessErrorAsync += _ => Task.CompletedTask;
        await processor.StartProcessingAsync();
        var lease = await handler.Entered.Task.WaitAsync(SbHarness.HangBound);

        await AdvanceUntilAsync(sb.VirtualClock, () => lease.RenewalCount >= 1, "a first renewal answered (the keeper measures its round trip)");
        var calls = kept.Keeper.GetStatistics().RenewCalls;
        await AdvanceUntilAsync(sb.VirtualClock, () => kept.Keeper.GetStatistics().RenewCalls > calls, "the next renewal sent");
        handler.Release.SetResult(); // the handler completes now, while that renewal waits at the broker
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletionsOf("x") == 1), SbHarness.HangBound, "the complete applied");
        var renewsBefore = queue.RenewCount;
        await AdvanceUntilAsync(sb.VirtualClock, () => handler.Completed.Task.IsCompleted && !lease.IsKept, "the complete answered and the refusal handled");
        await processor.StopProcessingAsync();

        queue.RenewCount.Should().BeGreaterThan(renewsBefore, "the broker judged the renewal after the complete: refused");
        lease.IsLost.Should().BeFalse("the handle's own complete was under way: the refusal is the settlement's, not a lost lock");
        lease.LeaseLostToken.IsCancellationRequested.Should().BeFalse();
        kept.Lost.Should().BeEmpty();
        kept.Keeper.GetStatistics().LeasesLost.Should().Be(0);
    }

    [Fact]
    public async Task A_renewal_refused_without_a_settlement_under_way_is_reported_lost()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration, MaxDeliveryCount = 5 });
        queue.Send("x"u8.ToArray(), "x");
        sb.Broker.Faults.RenewLockDelay = TimeSpan.FromSeconds(4);
        await using var kept = await KeeperRig.StartAsync(sb);
        await using var processor = sb.Transport.Client.CreateProcessor("orders", ProcessorOptions());
        var handler = new HandlerProbe();
        processor.ProcessMessageAsync += async args =>
        {
            if (args.Message.DeliveryCount > 1)
            {
                return; // the redelivery after the loss: not kept
            }

            using var lease = kept.Keeper.Keep(args, processor);
            await handler.HoldAsync(lease);
        };
        processor.ProcessErrorAsync += _ => Task.CompletedTask;
        await processor.StartProcessingAsync();
        var lease = await handler.Entered.Task.WaitAsync(SbHarness.HangBound);
        await AdvanceUntilAsync(sb.VirtualClock, () => lease.RenewalCount >= 1, "a first renewal answered");

        sb.Broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost); // the lock is lost; nothing settles it
        await AdvanceUntilAsync(sb.VirtualClock, () => lease.LeaseLostToken.IsCancellationRequested, "the lease token canceled");
        await Bounded.UntilAsync(() => Task.FromResult(kept.Lost.Count == 1), SbHarness.HangBound, "the loss reported");
        handler.Release.SetResult();
        await processor.StopProcessingAsync();

        lease.IsLost.Should().BeTrue();
        kept.Lost.Should().ContainSingle().Which.Should().Be("x");
        kept.Keeper.GetStatistics().LeasesLost.Should().Be(1);
    }

    [Fact]
    public async Task A_message_the_processor_auto_completes_after_the_handle_was_disposed_is_not_a_lost_lock()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration });
        queue.Send("x"u8.ToArray(), "x");
        await using var kept = await KeeperRig.StartAsync(sb);
        var options = ProcessorOptions();
        options.AutoCompleteMessages = true;
        await using var processor = sb.Transport.Client.CreateProcessor("orders", options);
        var handler = new HandlerProbe();
        processor.ProcessMessageAsync += async args =>
        {
            using var lease = kept.Keeper.Keep(args, processor);
            await handler.HoldAsync(lease);
        };
        processor.ProcessErrorAsync += _ => Task.CompletedTask;
        await processor.StartProcessingAsync();
        var lease = await handler.Entered.Task.WaitAsync(SbHarness.HangBound);
        await KeepAdvancingAsync(sb.VirtualClock, lease, LockDuration * 1.5);

        handler.Release.SetResult();
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletionsOf("x") == 1), SbHarness.HangBound, "the auto-completion");
        for (var i = 0; i < 40; i++)
        {
            sb.VirtualClock.Advance(Step); // well past the last renewal's lock: nothing may renew or report now
        }

        await processor.StopProcessingAsync();
        lease.IsKept.Should().BeFalse();
        lease.IsLost.Should().BeFalse();
        kept.Lost.Should().BeEmpty();
    }

    [Fact]
    public async Task A_receiver_loop_s_messages_are_kept_past_the_lock_duration_then_settled_through_the_receiver_or_the_handle()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration });
        queue.Send("x"u8.ToArray(), "x");
        queue.Send("y"u8.ToArray(), "y");
        await using var kept = await KeeperRig.StartAsync(sb);
        await using var receiver = sb.Transport.Client.CreateReceiver("orders", new ServiceBusReceiverOptions { PrefetchCount = 0 });

        var x = await ReceiveAsync(receiver);
        var leaseX = kept.Keeper.Keep(receiver, x);
        await KeepAdvancingAsync(sb.VirtualClock, leaseX, LockDuration * 2.5);
        leaseX.Dispose(); // then settle through the receiver, as the loop did before
        await receiver.CompleteMessageAsync(x);

        var y = await ReceiveAsync(receiver);
        var leaseY = kept.Keeper.Keep(receiver, y);
        await KeepAdvancingAsync(sb.VirtualClock, leaseY, LockDuration * 1.5);
        await leaseY.CompleteAsync(); // or through the handle, which stops renewing first

        queue.CompletionsOf("x").Should().Be(1);
        queue.CompletionsOf("y").Should().Be(1);
        queue.RenewCount.Should().BeGreaterThanOrEqualTo(3);
        leaseX.IsLost.Should().BeFalse();
        leaseY.IsLost.Should().BeFalse();
        leaseY.IsKept.Should().BeFalse();
        kept.Lost.Should().BeEmpty();
    }

    [Fact]
    public async Task A_session_processor_s_session_lock_is_kept_past_the_lock_duration_through_its_args()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("by-customer", new ServiceBusTestEntityOptions { LockDuration = LockDuration, RequiresSession = true });
        queue.Send("x"u8.ToArray(), "x", sessionId: "alice");
        await using var kept = await KeeperRig.StartAsync(sb);
        await using var processor = sb.Transport.Client.CreateSessionProcessor("by-customer", new ServiceBusSessionProcessorOptions
        {
            AutoCompleteMessages = false,
            MaxAutoLockRenewalDuration = TimeSpan.Zero,
            SessionIdleTimeout = TimeSpan.FromMilliseconds(200),
        });
        var handler = new HandlerProbe();
        DateTimeOffset sessionLockedUntil = default;
        processor.ProcessMessageAsync += async args =>
        {
            using var lease = kept.Keeper.Keep(args, processor);
            await handler.HoldAsync(lease);
            sessionLockedUntil = args.SessionLockedUntil;
            await args.CompleteMessageAsync(args.Message, CancellationToken.None);
            handler.Completed.TrySetResult();
        };
        processor.ProcessErrorAsync += _ => Task.CompletedTask;
        await processor.StartProcessingAsync();
        var lease = await handler.Entered.Task.WaitAsync(SbHarness.HangBound);
        var firstLock = lease.LockedUntil;

        await KeepAdvancingAsync(sb.VirtualClock, lease, LockDuration * 2.5);
        handler.Release.SetResult();
        await handler.Completed.Task.WaitAsync(SbHarness.HangBound);
        await processor.StopProcessingAsync();

        queue.CompletionsOf("x").Should().Be(1, "the session lock was held for 2.5 lock durations, renewed by the keeper");
        queue.RenewCount.Should().BeGreaterThanOrEqualTo(2, "renew-session-lock requests");
        sessionLockedUntil.Should().BeAfter(firstLock + LockDuration, "the lease's expiry is the session's");
        lease.IsLost.Should().BeFalse();
        kept.Lost.Should().BeEmpty();
    }

    [Fact]
    public async Task A_processor_that_renews_locks_itself_is_refused_by_name()
    {
        await using var client = new ServiceBusClient("Endpoint=sb://localhost/;SharedAccessKeyName=k;SharedAccessKey=dg==");
        await using var rig = await KeeperRig.StartAsync(clock: null);
        await using var renewing = client.CreateProcessor("orders"); // the SDK's default: 5 minutes of its own renewal
        await using var sessionsRenewing = client.CreateSessionProcessor("by-customer");
        var args = ProcessorArgs(TimeSpan.FromSeconds(30));

        var act = () => rig.Keeper.Keep(args, renewing);
        var actSession = () => rig.Keeper.Keep(SessionArgs(), sessionsRenewing);

        act.Should().Throw<ArgumentException>().Where(e => e.ParamName == "processor" && e.Message.Contains("MaxAutoLockRenewalDuration is 00:05:00", StringComparison.Ordinal) && e.Message.Contains("TimeSpan.Zero", StringComparison.Ordinal));
        actSession.Should().Throw<ArgumentException>().Where(e => e.ParamName == "processor" && e.Message.Contains("MaxAutoLockRenewalDuration", StringComparison.Ordinal));
        rig.Keeper.GetStatistics().Kept.Should().Be(0, "nothing was kept");
    }

    [Fact]
    public async Task Bad_input_is_named()
    {
        await using var client = new ServiceBusClient("Endpoint=sb://localhost/;SharedAccessKeyName=k;SharedAccessKey=dg==");
        await using var rig = await KeeperRig.StartAsync(clock: null);
        await using var processor = client.CreateProcessor("orders", ProcessorOptions());
        await using var sessionProcessor = client.CreateSessionProcessor("by-customer", new ServiceBusSessionProcessorOptions { MaxAutoLockRenewalDuration = TimeSpan.Zero });
        await using var receiveAndDelete = client.CreateReceiver("orders", new ServiceBusReceiverOptions { ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete });
        await using var peekLock = client.CreateReceiver("orders");
        var message = ServiceBusModelFactory.ServiceBusReceivedMessage(BinaryData.FromString("x"), messageId: "x", lockTokenGuid: Guid.NewGuid(), lockedUntil: DateTimeOffset.UtcNow.AddSeconds(30));
        var expired = ServiceBusModelFactory.ServiceBusReceivedMessage(BinaryData.FromString("x"), messageId: "old", lockTokenGuid: Guid.NewGuid(), lockedUntil: DateTimeOffset.UtcNow.AddSeconds(-1));
        var keeper = rig.Keeper;

        ((Action)(() => ServiceBusLeaseKeeperExtensions.Keep(null!, ProcessorArgs(LockDuration), processor))).Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("keeper");
        ((Action)(() => keeper.Keep((ProcessMessageEventArgs)null!, processor))).Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("args");
        ((Action)(() => keeper.Keep(ProcessorArgs(LockDuration), null!))).Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("processor");
        ((Action)(() => keeper.Keep((ProcessSessionMessageEventArgs)null!, sessionProcessor))).Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("args");
        ((Action)(() => keeper.Keep(SessionArgs(), null!))).Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("processor");
        ((Action)(() => keeper.Keep((ServiceBusReceiver)null!, message))).Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("receiver");
        ((Action)(() => keeper.Keep(peekLock, null!))).Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("message");
        ((Action)(() => keeper.Keep(receiveAndDelete, message))).Should().Throw<ArgumentException>()
            .Where(e => e.ParamName == "receiver" && e.Message.Contains("ReceiveAndDelete", StringComparison.Ordinal));
        keeper.Keep(peekLock, expired).IsLost.Should().BeTrue("a message whose lock ran out before Keep gets a handle lost from the start");

        var lease = keeper.Keep(peekLock, message);
        ((Action)(() => keeper.Keep(peekLock, message))).Should().Throw<InvalidOperationException>("the same message is kept already")
            .Which.Message.Should().Contain("x");
        lease.Dispose();
        lease.Dispose(); // idempotent
        keeper.Keep(peekLock, message).Dispose(); // kept again once released
    }

    private static ServiceBusProcessorOptions ProcessorOptions() => new()
    {
        AutoCompleteMessages = false,
        MaxAutoLockRenewalDuration = TimeSpan.Zero, // the keeper renews
        MaxConcurrentCalls = 1,
        PrefetchCount = 0,
    };

    private static ProcessMessageEventArgs ProcessorArgs(TimeSpan lockLeft) => new(
        ServiceBusModelFactory.ServiceBusReceivedMessage(BinaryData.FromString("a"), messageId: "a", lockTokenGuid: Guid.NewGuid(), lockedUntil: DateTimeOffset.UtcNow + lockLeft),
        receiver: null,
        CancellationToken.None);

    private static ProcessSessionMessageEventArgs SessionArgs() => new(
        ServiceBusModelFactory.ServiceBusReceivedMessage(BinaryData.FromString("a"), messageId: "a", sessionId: "alice", lockTokenGuid: Guid.NewGuid(), lockedUntil: DateTimeOffset.UtcNow.AddSeconds(30)),
        receiver: null,
        CancellationToken.None);

    private static async Task<ServiceBusReceivedMessage> ReceiveAsync(ServiceBusReceiver receiver)
    {
        for (var attempt = 0; attempt < 50; attempt++)
        {
            if (await receiver.ReceiveMessageAsync(TimeSpan.FromMilliseconds(200)) is { } message)
            {
                return message;
            }
        }

        throw new TimeoutException("No message was received.");
    }

    /// <summary>
    /// Advances the broker's and the keeper's virtual clock over <paramref name="total"/>, at most a second at a time and
    /// never past the lease's next renewal, and only while the keeper is at rest: no renewal of the lease is under way
    /// and its next one is scheduled later than now. The keeper's timer fires inside <see cref="VirtualTimeProvider.Advance"/>,
    /// but it sends the renewal, and handles the answer, on its own thread: advancing meanwhile moved the clock under a
    /// renewal in flight (an answer handled 29 s later planned the next renewal half a second before a lock end the clock
    /// then never reached, and the test waited for it in vain). So each renewal is sent at its due time and answered
    /// before the clock moves on; each must be planned at least a step before the lock ends.
    /// </summary>
    private static async Task KeepAdvancingAsync(VirtualTimeProvider clock, LeaseHandle lease, TimeSpan total)
    {
        var end = clock.GetUtcNow() + total;
        for (var now = clock.GetUtcNow(); now < end; now = clock.GetUtcNow())
        {
            await Bounded.UntilAsync(
                () => Task.FromResult(lease.IsLost || KeeperAtRest(clock, lease)),
                SbHarness.HangBound,
                $"the keeper at rest with {lease} at {now:HH:mm:ss.fff} (virtual), {end - now} before the end",
                TimeSpan.FromMilliseconds(5));
            lease.IsLost.Should().BeFalse($"the keeper renews in time ({end - now} before the end)");
            var nextRenewal = new DateTimeOffset(lease.RenewDueTicks, TimeSpan.Zero);
            (lease.LockedUntil - nextRenewal).Should().BeGreaterThanOrEqualTo(Step, "the keeper plans each renewal with lock time to spare");
            clock.Advance(Min(Min(Step, nextRenewal - now), end - now));
        }
    }

    /// <summary>Advances the virtual clock a second at a time (at most three lock durations) until <paramref name="done"/>, giving the client and the keeper a moment after each step.</summary>
    private static async Task AdvanceUntilAsync(VirtualTimeProvider clock, Func<bool> done, string what)
    {
        for (var advanced = TimeSpan.Zero; !done(); advanced += Step)
        {
            advanced.Should().BeLessThan(LockDuration * 3, $"{what} within three lock durations of virtual time");
            clock.Advance(Step);
            await Bounded.UntilAsync(() => Task.FromResult(done()), TimeSpan.FromMilliseconds(200), what, TimeSpan.FromMilliseconds(10)).ContinueWith(static _ => { }, TaskScheduler.Default);
        }
    }

    /// <summary>
    /// Whether the keeper has nothing to do for <paramref name="lease"/> before the clock moves: no renewal under way,
    /// the next one scheduled, later than now. Read without the keeper's lock: a read in the middle of an answer's
    /// handling may see the lease out of flight while the slot planned at its sending is still there; the clock then
    /// moves at most to that slot, and the keeper plans the next renewal from the lock's new end, as at any time.
    /// </summary>
    private static bool KeeperAtRest(VirtualTimeProvider clock, LeaseHandle lease) =>
        lease.RenewalsInFlight == 0 && lease.IsScheduled && lease.RenewDueTicks > clock.GetUtcNow().UtcTicks;

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;

    /// <summary>A handler that says when it holds its lease and waits until the test lets it go on.</summary>
    private sealed class HandlerProbe
    {
        public TaskCompletionSource<LeaseHandle> Entered { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource Release { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource Completed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        /// <remarks>
        /// Bounded: a test that fails before it releases the handler must still end. The SDK's processor waits for its
        /// running handlers when it is disposed, without a bound, so an unbounded hold turned such a failure into a hang.
        /// </remarks>
        public async Task HoldAsync(LeaseHandle lease)
        {
            Entered.TrySetResult(lease);
            await Release.Task.WaitAsync(SbHarness.HangBound);
        }
    }

    /// <summary>A keeper in a <see cref="PriorityTaskScheduler"/>'s lease lane (its reserved worker), timed by the broker's virtual clock, recording the losses it reports.</summary>
    private sealed class KeeperRig : IAsyncDisposable
    {
        private readonly PriorityTaskScheduler _scheduler;
        private readonly List<string> _lost = [];

        private KeeperRig(PriorityTaskScheduler scheduler, LeaseKeeper keeper)
        {
            _scheduler = scheduler;
            Keeper = keeper;
            Keeper.LeaseLost += (_, e) =>
            {
                lock (_lost)
                {
                    _lost.Add(e.Handle.Message.MessageId);
                }
            };
        }

        public LeaseKeeper Keeper { get; }

        public IReadOnlyList<string> Lost
        {
            get
            {
                lock (_lost)
                {
                    return [.. _lost];
                }
            }
        }

        public static Task<KeeperRig> StartAsync(SbHarness sb) => StartAsync(sb.VirtualClock);

        public static Task<KeeperRig> StartAsync(TimeProvider? clock)
        {
            // The scheduler's threads are real; the keeper schedules its renewals on the broker's virtual clock.
            var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
            return Task.FromResult(new KeeperRig(scheduler, new LeaseKeeper(scheduler, new LeaseKeeperOptions { TimeProvider = clock })));
        }

        public async ValueTask DisposeAsync()
        {
            await Keeper.DisposeAsync();
            _scheduler.Dispose();
        }
    }
}
