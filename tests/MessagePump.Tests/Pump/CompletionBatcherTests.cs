namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// Completions in batches without delay (docs/message-pump.md): a completion that finds no call under way goes at
/// once, alone; those that arrive meanwhile go together, up to the batch limit, when it answers; outcomes are per
/// message; a waiting completion whose settlement is aborted ends at once, and a call whose completions were all
/// aborted is canceled. The broker here answers only when the test says so.
/// </summary>
public class CompletionBatcherTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task TheFirstCompletionGoesAlone_TheNextWaitForItsAnswer_AndGoTogether_UpToTheLimit()
    {
        var (source, batcher, contexts, broken) = Create(maxBatchSize: 2, "a", "b", "c", "d", "e");
        var a = batcher.CompleteAsync(contexts[0]).AsTask();
        source.Calls.Should().ContainSingle().Which.Ids.Should().Equal("a");
        var b = batcher.CompleteAsync(contexts[1]).AsTask();
        var c = batcher.CompleteAsync(contexts[2]).AsTask();
        var d = batcher.CompleteAsync(contexts[3]).AsTask();
        source.Calls.Should().HaveCount(1, "the others wait for the call under way");

        source.Calls[0].Answer.SetResult([null]);
        (await a.WaitAsync(Bound)).Should().BeNull();
        await Eventually(() => source.Calls.Count == 2);
        source.Calls[1].Ids.Should().Equal("b", "c");

        var lost = new LeaseLostException("gone");
        source.Calls[1].Answer.SetResult([null, lost]);
        (await b.WaitAsync(Bound)).Should().BeNull();
        (await c.WaitAsync(Bound)).Should().BeSameAs(lost);
        await Eventually(() => source.Calls.Count == 3);
        source.Calls[2].Ids.Should().Equal("d");

        source.Calls[2].Answer.SetResult([]);
        var wrongCount = await d.WaitAsync(Bound);
        wrongCount.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Be(
            "ManualBatches.CompleteBatchAsync returned 0 outcomes for 1 messages; it must return one per message, in order.");
        broken.Should().ContainSingle().Which.Should().BeSameAs(wrongCount);

        var e = batcher.CompleteAsync(contexts[4]).AsTask();
        await Eventually(() => source.Calls.Count == 4);
        source.Calls[3].Ids.Should().Equal("e");
        source.Calls[3].Answer.SetResult(null!);
        (await e.WaitAsync(Bound)).Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("returned null outcomes for 1 messages");
        broken.Should().HaveCount(2);
    }

    [Fact]
    public async Task ACallFailingAsAWhole_FailsEachOfItsCompletions()
    {
        var (source, batcher, contexts, broken) = Create(maxBatchSize: 10, "a", "b", "c");
        var a = batcher.CompleteAsync(contexts[0]).AsTask();
        var b = batcher.CompleteAsync(contexts[1]).AsTask();
        var c = batcher.CompleteAsync(contexts[2]).AsTask();
        source.Calls[0].Answer.SetResult([null]);
        await Eventually(() => source.Calls.Count == 2);

        var failure = new TransientTransportException("busy");
        source.Calls[1].Answer.SetException(failure);

        (await b.WaitAsync(Bound)).Should().BeSameAs(failure);
        (await c.WaitAsync(Bound)).Should().BeSameAs(failure);
        (await a.WaitAsync(Bound)).Should().BeNull();
        broken.Should().BeEmpty();
    }

    [Fact]
    public async Task AnAbortedCompletion_EndsAtOnce_AndIsNotSent()
    {
        var (source, batcher, contexts, _) = Create(maxBatchSize: 10, "a", "b", "c");
        var a = batcher.CompleteAsync(contexts[0]).AsTask();
        var b = batcher.CompleteAsync(contexts[1]).AsTask();
        var c = batcher.CompleteAsync(contexts[2]).AsTask();

        contexts[1].AbortSettlement();

        b.IsCompleted.Should().BeTrue("an aborted completion does not wait for the call under way");
        (await b).Should().BeAssignableTo<OperationCanceledException>();
        source.Calls[0].Answer.SetResult([null]);
        await Eventually(() => source.Calls.Count == 2);
        source.Calls[1].Ids.Should().Equal("c");
        source.Calls[1].Answer.SetResult([null]);
        (await a.WaitAsync(Bound)).Should().BeNull();
        (await c.WaitAsync(Bound)).Should().BeNull();
    }

    [Fact]
    public async Task ACallUnderWay_IsCanceled_OnlyOnceEveryCompletionItCarriesWasAborted()
    {
        var (source, batcher, contexts, _) = Create(maxBatchSize: 10, "a", "b", "c");
        _ = batcher.CompleteAsync(contexts[0]).AsTask();
        var b = batcher.CompleteAsync(contexts[1]).AsTask();
        var c = batcher.CompleteAsync(contexts[2]).AsTask();
        source.Calls[0].Answer.SetResult([null]);
        await Eventually(() => source.Calls.Count == 2);
        var call = source.Calls[1];
        call.Ids.Should().Equal("b", "c");

        contexts[1].AbortSettlement();
        (await b.WaitAsync(Bound)).Should().BeAssignableTo<OperationCanceledException>();
        call.Token.IsCancellationRequested.Should().BeFalse("c still waits for this call");

        contexts[2].AbortSettlement();
        (await c.WaitAsync(Bound)).Should().BeAssignableTo<OperationCanceledException>();
        call.Token.IsCancellationRequested.Should().BeTrue("nobody waits for this call any more");
        call.Answer.SetResult([null, null]); // a late answer changes no outcome
        (await c).Should().BeAssignableTo<OperationCanceledException>();
    }

    [Fact]
    public async Task CompletionsAreReused_AndAnAbortOfAnEarlierMessage_TouchesNoLaterOne()
    {
        var (source, batcher, contexts, _) = Create(maxBatchSize: 10, "a", "b", "c", "d");
        var a = batcher.CompleteAsync(contexts[0]).AsTask();
        source.Calls[0].Answer.SetResult([null]);
        (await a.WaitAsync(Bound)).Should().BeNull();

        // b's completion may be a's, reused: a's abort, after a's outcome, must not reach it.
        var b = batcher.CompleteAsync(contexts[1]).AsTask();
        await Eventually(() => source.Calls.Count == 2);
        contexts[0].AbortSettlement();
        b.IsCompleted.Should().BeFalse("the abort was about a, whose completion had ended");
        source.Calls[1].Token.IsCancellationRequested.Should().BeFalse();
        source.Calls[1].Answer.SetResult([null]);
        (await b.WaitAsync(Bound)).Should().BeNull();

        // A call canceled because all its completions were aborted: the next call gets a fresh, live token.
        var c = batcher.CompleteAsync(contexts[2]).AsTask();
        await Eventually(() => source.Calls.Count == 3);
        contexts[2].AbortSettlement();
        (await c.WaitAsync(Bound)).Should().BeAssignableTo<OperationCanceledException>();
        source.Calls[2].Token.IsCancellationRequested.Should().BeTrue();
        source.Calls[2].Answer.SetResult([null]);
        var d = batcher.CompleteAsync(contexts[3]).AsTask();
        await Eventually(() => source.Calls.Count == 4);
        source.Calls[3].Token.IsCancellationRequested.Should().BeFalse("a canceled source is never reused");
        source.Calls[3].Answer.SetResult([null]);
        (await d.WaitAsync(Bound)).Should().BeNull();
    }

    private static (ManualBatches Source, CompletionBatcher Batcher, PumpDelivery[] Contexts, List<Exception> Broken) Create(int maxBatchSize, params string[] ids)
    {
        var source = new ManualBatches();
        var scheduler = new PriorityAsyncContext();
        var pump = new PriorityMessagePump(source, (_, _) => Task.CompletedTask, scheduler);
        var broken = new List<Exception>();
        var batcher = new CompletionBatcher(source, maxBatchSize, broken.Add);
        return (source, batcher, [.. ids.Select(id => new PumpDelivery(pump, new Fake(id)))], broken);
    }

    private static async Task Eventually(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Bound;
        while (!condition())
        {
            DateTime.UtcNow.Should().BeBefore(deadline, "the batcher should have sent its next call");
            await Task.Delay(1);
        }
    }

    private sealed record Call(string[] Ids, CancellationToken Token, TaskCompletionSource<IReadOnlyList<Exception?>> Answer);

    private sealed class ManualBatches : IMessageSource
    {
        private readonly List<Call> _calls = [];

        public IReadOnlyList<Call> Calls
        {
            get
            {
                lock (_calls)
                {
                    return [.. _calls];
                }
            }
        }

        public TimeSpan? LockDuration => null;

        public bool CompletesBatchesNatively => true;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) => Task.FromResult<ILeasedMessage?>(null);

        public Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
        {
            var answer = new TaskCompletionSource<IReadOnlyList<Exception?>>(TaskCreationOptions.RunContinuationsAsynchronously);
            lock (_calls)
            {
                _calls.Add(new Call([.. messages.Select(m => m.MessageId)], cancellationToken, answer));
            }

            return answer.Task;
        }
    }

    private sealed class Fake(string id) : ILeasedMessage
    {
        public string MessageId => id;

        public ReadOnlyMemory<byte> Body => ReadOnlyMemory<byte>.Empty;

        public int DeliveryCount => 1;

        public DateTimeOffset LockedUntil => DateTimeOffset.MaxValue;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => Task.FromResult(LockedUntil);

        public Task CompleteAsync(CancellationToken cancellationToken = default) => throw new NotSupportedException("completed in batches");

        public Task AbandonAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => Task.CompletedTask;
    }
}
