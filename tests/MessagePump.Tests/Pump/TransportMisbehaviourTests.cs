using System.Globalization;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// What the pump does when the transport breaks its contract or refuses a settlement for good, and when it renews.
/// Virtual time, one thread.
/// </summary>
public class TransportMisbehaviourTests
{
    [Fact]
    public void ReceiveAnsweringNull_IsAFailedReceive_ReportedAndRetriedAfterTheEmptyReceiveDelay()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q");
        var source = new ScriptedSource(queue)
        {
            Answer = (call, _, answer) =>
            {
                if (call > 0)
                {
                    return answer;
                }

                queue.Send(new byte[] { 1 }, "m1"); // visible from now on: the next receive takes it
                return null!;
            },
        };
        var logger = new ListLogger();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(source, (_, _) => Task.CompletedTask, scheduler, new MessagePumpOptions { EmptyReceiveDelay = TimeSpan.FromSeconds(3) }, logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        source.Receives[1].At.Should().Be(source.Receives[0].At + TimeSpan.FromSeconds(3), "a failed receive pauses for EmptyReceiveDelay");
        var failed = logger.Entries.Where(e => e.EventId.Id == 31).Should().ContainSingle(logger.ToString()).Which;
        failed.Exception.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Be(
            "ScriptedSource.ReceiveBatchAsync returned null; it must return an empty list when no message is visible.");
        failed.Message.Should().Be("Message pump message-pump failed to receive; retrying in 00:00:03.");
        stats.Should().BeEquivalentTo(new { Received = 1, Completed = 1, SettleFailures = 0, LeasesLost = 0 });
        stats!.ShouldBeConsistent();
    }

    [Fact]
    public void ReceiveAnsweringANullMessage_IsReportedOnce_AndTheMessagesAreProcessed()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q");
        var source = new ScriptedSource(queue)
        {
            Answer = (call, _, answer) =>
            {
                if (call > 0)
                {
                    return answer;
                }

                queue.Send(new byte[] { 1 }, "m1");
                queue.Send(new byte[] { 2 }, "m2");
                return [null!];
            },
        };
        var logger = new ListLogger();
        var handled = new List<string>();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(source, (context, _) => { handled.Add(context.Message.MessageId); return Task.CompletedTask; }, scheduler, logger: logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 2, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        handled.Should().Equal("m1", "m2");
        logger.Entries.Where(e => e.EventId.Id == 33).Should().ContainSingle(logger.ToString()).Which.Exception!.Message.Should().Be(
            "ScriptedSource.ReceiveBatchAsync returned 1 messages (1 null) when asked for at most 1; it must return at most maxMessages messages, none of them null.");
        stats.Should().BeEquivalentTo(new { Received = 2, Completed = 2, PeakInFlight = 1 });
        stats!.ShouldBeConsistent();
        stats.ShouldMatch(queue.GetStatistics());
    }

    /// <summary>
    /// A settle call that fails with an error that is neither transient nor a lost lease is counted once and logged
    /// (event 23) without a retry; the message stays locked until its lock expires, then the broker delivers it again.
    /// </summary>
    [Theory]
    [InlineData("complete")]
    [InlineData("abandon")]
    [InlineData("dead-letter")]
    public void SettleCallFailingForGood_IsCountedAndLoggedOnce_NotRetried_AndTheMessageComesBack(string operation)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send(new byte[] { 1 }, "m1");
        var source = new ScriptedSource(queue)
        {
            SettleFault = (op, message) => op == operation && message.DeliveryCount == 1 ? new InvalidOperationException("refused") : null,
        };
        var logger = new ListLogger();
        var deadLettered = new List<bool>();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                source,
                async (context, _) =>
                {
                    if (context.Message.DeliveryCount > 1)
                    {
                        return;
                    }

                    switch (operation)
                    {
                        case "abandon":
                            throw new InvalidOperationException("handler failed");
                        case "dead-letter":
                            deadLettered.Add(await context.DeadLetterAsync("poison"));
                            break;
                    }
                },
                scheduler,
                logger: logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        var failure = logger.Entries.Where(e => e.EventId.Id == 23).Should().ContainSingle(logger.ToString()).Which;
        failure.Message.Should().Be($"Message pump message-pump failed to {operation} m1.");
        failure.Exception!.Message.Should().Be("refused");
        logger.Entries.Should().NotContain(e => e.EventId.Id == 21 || e.EventId.Id == 22, "the failure is not retried and the lease is not reported lost");
        deadLettered.Should().Equal(operation == "dead-letter" ? [false] : Array.Empty<bool>());
        stats.Should().BeEquivalentTo(new
        {
            Received = 2,
            Completed = 1,
            Abandoned = 0,
            DeadLettered = 0,
            SettleFailures = 1,
            HandlerFailures = operation == "abandon" ? 1 : 0,
            LeasesLost = 0,
            TransientRetries = 0,
        });
        stats!.ShouldBeConsistent();
        queue.GetStatistics().Should().BeEquivalentTo(new { Received = 2, Completed = 1, LeasesLost = 1, DeadLettered = 0, InFlight = 0 });
    }

    /// <summary>
    /// When the keeper renews, with no latency (so the round-trip rule adds nothing): the default renews when
    /// min(half the remaining lock, 10 s) is left; <see cref="LeaseKeeperOptions.LockRenewalBuffer"/> replaces that rule as set.
    /// </summary>
    [Theory]
    [InlineData(30, 0, 50, "20,40")]
    [InlineData(8, 0, 18, "4,8,12,16")]
    [InlineData(60, 0, 70, "50")]
    [InlineData(30, 5, 55, "25,50")]
    [InlineData(30, 20, 25, "10,20")]
    public void Renewals_AreSentWhenTheRenewalBufferIsLeft(int lockSeconds, int bufferSeconds, int handlerSeconds, string expectedSeconds)
    {
        var expected = expectedSeconds.Split(',').Select(s => TimeSpan.FromSeconds(int.Parse(s, CultureInfo.InvariantCulture))).ToList();
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(lockSeconds) });
        queue.Send(new byte[] { 1 }, "m1");
        var source = new ScriptedSource(queue);
        var options = new MessagePumpOptions { LeaseKeeper = new() { LockRenewalBuffer = bufferSeconds == 0 ? null : TimeSpan.FromSeconds(bufferSeconds) } };
        DateTimeOffset started = default;
        var renewalCount = -1;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                source,
                async (context, token) =>
                {
                    started = context.TimeProvider.GetUtcNow();
                    await Task.Delay(TimeSpan.FromSeconds(handlerSeconds), context.TimeProvider, token);
                    renewalCount = context.RenewalCount;
                },
                scheduler,
                options);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1, clock, TimeSpan.FromMinutes(5));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        source.Renewals.Select(r => r.At - started).Should().Equal(expected);
        renewalCount.Should().Be(expected.Count);
        stats.Should().BeEquivalentTo(new { Received = 1, Completed = 1, LeasesLost = 0, Renewals = expected.Count });
    }

    /// <summary>
    /// A renew call that keeps failing transiently is retried with backoff — <see cref="LeaseKeeperOptions.TransientRetryDelay"/>
    /// doubled for each retry, cut to half the lock left — until a pause would be under a sixteenth of the retry delay
    /// (no tight loop as the lock runs down); the lease is lost at the instant its lock runs out (event 22, with the
    /// last failure as its cause) and the handler is canceled then.
    /// </summary>
    [Fact]
    public void RenewFailingTransiently_IsRetriedWithBackoff_CutToHalfTheLockLeft_AndLostWhenTheLockRunsOut()
    {
        var lockDuration = TimeSpan.FromSeconds(10);
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = lockDuration, RenewFailureRate = 1, MaxDeliveryCount = 1 });
        queue.Send(new byte[] { 1 }, "m1");
        var source = new ScriptedSource(queue);
        var logger = new ListLogger();
        var lostMeasured = 0L;
        using var listener = new System.Diagnostics.Metrics.MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == MessagePumpDiagnostics.MeterName && instrument.Name == MessagePumpMetrics.LeasesLostName)
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == MessagePumpDiagnostics.PumpTag && (string?)tag.Value == "renew-retries")
                {
                    Interlocked.Add(ref lostMeasured, value);
                }
            }
        });
        listener.Start();
        DateTimeOffset started = default;
        DateTimeOffset canceledAt = default;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                source,
                async (context, token) =>
                {
                    started = context.TimeProvider.GetUtcNow();
                    using var registration = token.Register(() => canceledAt = clock.GetUtcNow());
                    await Task.Delay(TimeSpan.FromMinutes(1), context.TimeProvider, token);
                },
                scheduler,
                new MessagePumpOptions { Name = "renew-retries", LeaseKeeper = new() { TransientRetryDelay = TimeSpan.FromSeconds(1) } },
                logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().DeadLettered == 1, clock, TimeSpan.FromMinutes(5));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        var lockedUntil = started + lockDuration; // never renewed
        var attempts = source.Renewals.Select(r => r.At).ToList();
        attempts[0].Should().Be(started + TimeSpan.FromSeconds(5), "the first renewal is sent at half the lock");
        for (var i = 1; i < attempts.Count; i++)
        {
            var backoff = TimeSpan.FromSeconds(1) * Math.Pow(2, i - 1);
            var pause = TimeSpan.FromTicks(Math.Min(backoff.Ticks, (lockedUntil - attempts[i - 1]).Ticks / 2));
            pause = TimeSpan.FromMilliseconds(Math.Floor(pause.TotalMilliseconds)); // Task.Delay waits whole milliseconds
            (attempts[i] - attempts[i - 1]).Should().Be(pause, "retry {0} waits the doubled retry delay cut to half the lock left", i);
        }

        attempts.Select(a => a - started).Should().Equal(new[] { 5, 6, 8, 9, 9.5, 9.75, 9.875, 9.937 }.Select(TimeSpan.FromSeconds), "the last pause, 62 ms, is the least a retry waits (a sixteenth of 1 s)");
        canceledAt.Should().Be(lockedUntil, "the lease is lost at the instant its lock runs out, not at the last failed attempt");
        stats.Should().BeEquivalentTo(new { Received = 1, LeasesLost = 1, Renewals = 0, TransientRetries = attempts.Count - 1, Completed = 0, Abandoned = 0 });
        logger.Entries.Where(e => e.EventId.Id == 21).Should().HaveCount(attempts.Count - 1)
            .And.OnlyContain(e => e.Message.StartsWith("Message pump renew-retries: renew of m1 failed transiently; retrying in ", StringComparison.Ordinal));
        var lost = logger.Entries.Where(e => e.EventId.Id == 22).Should().ContainSingle().Which;
        lost.Exception.Should().BeOfType<LeaseLostException>().Which.InnerException.Should().BeOfType<TransientTransportException>("the last renewal's failure is the cause");
        lost.Message.Should().Contain("lost the lease of m1 during renew;");
        lostMeasured.Should().Be(1, "the lease lost is counted on the meter too");
    }
}
