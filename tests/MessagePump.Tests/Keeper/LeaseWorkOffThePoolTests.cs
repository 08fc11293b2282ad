using System.Collections.Concurrent;
using PriorityAsync.MessagePump.Tests.Pump;

namespace PriorityAsync.MessagePump.Tests.Keeper;

/// <summary>
/// Lease work never runs off the lease lane: with a <see cref="PriorityTaskScheduler"/>, every renew call of the pump's
/// keeper and of a <see cref="LeaseKeeper"/> starts in the lease lane, and the keeper reads each answer (the message's
/// <see cref="ILeasedMessage.LockedUntil"/>) back in that lane too, although the source completes every answer on a
/// thread of its own, as a broker SDK's I/O does. The answers complete synchronously there, so a keeper continuation
/// that left its lane (a <c>ConfigureAwait(false)</c>) would run on that thread and be seen. The answering thread is a
/// dedicated one, not the pool's: a test host on two cores holds pool threads itself, and an answer queued to a pool
/// that has none free waits for the pool to grow, longer than a short lock. Real clock; the test asserts where the work
/// ran, not when.
/// </summary>
public class LeaseWorkOffThePoolTests
{
    [Fact]
    public async Task EveryRenewalAndEveryAnswer_RunsInTheLeaseLane()
    {
        var queue = new InMemoryTransport().CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromMilliseconds(600) });
        for (var i = 0; i < 4; i++)
        {
            queue.Send(new byte[] { (byte)i }, $"m{i}");
        }

        using var source = new AnsweredElsewhere(queue);
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2 });
        await using var keeper = new LeaseKeeper(scheduler);
        var kept = (await source.ReceiveAsync())!;
        using var handle = keeper.Keep(kept, source);
        var pump = new PriorityMessagePump(
            source,
            (context, token) => Task.Delay(TimeSpan.FromMilliseconds(1500), context.TimeProvider, token),
            scheduler,
            new MessagePumpOptions { MaxInFlight = 2 });
        await pump.StartAsync();

        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 3 && handle.RenewalCount >= 2, TimeProvider.System, TimeSpan.FromMinutes(1), TimeSpan.FromMilliseconds(20));
        await pump.StopAsync();
        await handle.CompleteAsync();

        source.RenewCalls.Should().BeGreaterThan(4, "the pump's leases and the kept one were renewed");
        source.Seen.Should().NotBeEmpty().And.OnlyContain(
            seen => !seen.OnAnsweringThread && !seen.OnPool && seen.Lane == LanePriority.Lease,
            "every renew call and every answer the keepers read ran in the lease lane");
        pump.GetStatistics().LeasesLost.Should().Be(0);
        handle.IsLost.Should().BeFalse();
    }

    /// <summary>
    /// A source whose renew answers complete on a dedicated thread of its own, recording where each renew call and each
    /// keeper read of <c>LockedUntil</c> after an answer ran.
    /// </summary>
    private sealed class AnsweredElsewhere : IMessageSource, IDisposable
    {
        private readonly InMemoryQueue _inner;
        private readonly BlockingCollection<Action> _answers = [];
        private readonly Thread _answering;
        private int _renewCalls;

        public AnsweredElsewhere(InMemoryQueue inner)
        {
            _inner = inner;
            _answering = new Thread(() =>
            {
                foreach (var answer in _answers.GetConsumingEnumerable())
                {
                    answer();
                }
            })
            { IsBackground = true, Name = "answers" };
            _answering.Start();
        }

        public ConcurrentQueue<(string What, bool OnAnsweringThread, bool OnPool, LanePriority? Lane)> Seen { get; } = new();

        public int RenewCalls => Volatile.Read(ref _renewCalls);

        public TimeSpan? LockDuration => _inner.LockDuration;

        public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            await _inner.ReceiveAsync(cancellationToken) is { } message ? new Message(message, this) : null;

        public void Dispose()
        {
            _answers.CompleteAdding();
            _answering.Join();
            _answers.Dispose();
        }

        private void Record(string what)
        {
            // Only the keepers' work is recorded: the handlers' own reads come from the processing lane.
            if (PriorityScheduler.CurrentLane?.Priority != LanePriority.Processing)
            {
                Seen.Enqueue((what, Thread.CurrentThread == _answering, Thread.CurrentThread.IsThreadPoolThread, PriorityScheduler.CurrentLane?.Priority));
            }
        }

        private sealed class Message(ILeasedMessage inner, AnsweredElsewhere source) : ILeasedMessage
        {
            private long _lockedUntilTicks = inner.LockedUntil.UtcTicks;
            private volatile bool _answered;

            public string MessageId => inner.MessageId;

            public ReadOnlyMemory<byte> Body => inner.Body;

            public int DeliveryCount => inner.DeliveryCount;

            public DateTimeOffset LockedUntil
            {
                get
                {
                    if (_answered)
                    {
                        source.Record("read the answer");
                    }

                    return new DateTimeOffset(Interlocked.Read(ref _lockedUntilTicks), TimeSpan.Zero);
                }
            }

            public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
            {
                source.Record("renew");
                Interlocked.Increment(ref source._renewCalls);
                var renewal = inner.RenewLockAsync(cancellationToken);

                // No RunContinuationsAsynchronously: a continuation that does not go back to its lane runs right here,
                // on the answering thread, where Record sees it.
                var answer = new TaskCompletionSource<DateTimeOffset>();
                source._answers.Add(() =>
                {
                    try
                    {
                        var lockedUntil = renewal.GetAwaiter().GetResult();
                        Interlocked.Exchange(ref _lockedUntilTicks, lockedUntil.UtcTicks);
                        _answered = true;
                        answer.SetResult(lockedUntil);
                    }
                    catch (Exception ex)
                    {
                        answer.SetException(ex);
                    }
                });
                return answer.Task;
            }

            public Task CompleteAsync(CancellationToken cancellationToken = default) => inner.CompleteAsync(cancellationToken);

            public Task AbandonAsync(CancellationToken cancellationToken = default) => inner.AbandonAsync(cancellationToken);

            public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => inner.DeadLetterAsync(reason, cancellationToken);
        }
    }
}
