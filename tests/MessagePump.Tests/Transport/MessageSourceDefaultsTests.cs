namespace PriorityAsync.MessagePump.Tests.Transport;

/// <summary>
/// The default batch calls of <see cref="IMessageSource"/>, for an adapter that has only single calls: a receive of
/// one, and one complete call per message with an outcome per message, in order.
/// </summary>
public class MessageSourceDefaultsTests
{
    [Fact]
    public async Task ReceiveBatch_ByDefault_ReceivesOneMessage_OrNone()
    {
        var message = new Single("m1");
        IMessageSource source = new SingleCallsSource([message]);

        (await source.ReceiveBatchAsync(10)).Should().Equal(message);
        (await source.ReceiveBatchAsync(10)).Should().BeEmpty();
        await FluentActions.Awaiting(() => source.ReceiveBatchAsync(0)).Should().ThrowAsync<ArgumentOutOfRangeException>().WithParameterName("maxMessages");
    }

    [Fact]
    public async Task CompleteBatch_ByDefault_CompletesEachWithItsOwnCall_AndReportsEachOutcomeInOrder()
    {
        var failure = new LeaseLostException("gone");
        var thrown = new TransientTransportException("busy");
        var messages = new[]
        {
            new Single("ok"),
            new Single("faulted") { Complete = _ => Task.FromException(failure) },
            new Single("threw") { Complete = _ => throw thrown },
            new Single("canceled") { Complete = _ => Task.FromCanceled(new CancellationToken(canceled: true)) },
            new Single("ok too"),
        };
        IMessageSource source = new SingleCallsSource([]);

        var outcomes = await source.CompleteBatchAsync(messages);

        outcomes.Should().HaveCount(5);
        outcomes[0].Should().BeNull();
        outcomes[1].Should().BeSameAs(failure);
        outcomes[2].Should().BeSameAs(thrown);
        outcomes[3].Should().BeAssignableTo<OperationCanceledException>().Which.Message.Should().Be("The complete call was canceled.");
        outcomes[4].Should().BeNull();
        messages.Select(m => m.CompleteCalls).Should().Equal(1, 1, 1, 1, 1);
    }

    [Fact]
    public async Task CompleteBatch_ByDefault_WaitsForEveryCallsAnswer()
    {
        var later = new TaskCompletionSource();
        var messages = new[] { new Single("slow") { Complete = _ => later.Task }, new Single("quick") };
        IMessageSource source = new SingleCallsSource([]);

        var batch = source.CompleteBatchAsync(messages);
        batch.IsCompleted.Should().BeFalse("the slow call has not answered");
        messages.Select(m => m.CompleteCalls).Should().Equal(1, 1);
        later.SetResult();

        (await batch.WaitAsync(TimeSpan.FromSeconds(30))).Should().HaveCount(2).And.OnlyContain(outcome => outcome == null);
        source.CompletesBatchesNatively.Should().BeFalse("a source with single calls only is completed one call per message by the pump");
    }

    [Fact]
    public async Task CompleteBatch_ByDefault_PassesItsTokenToEachCall()
    {
        using var cancellation = new CancellationTokenSource();
        var seen = new List<CancellationToken>();
        var messages = new[] { new Single("a") { Complete = t => { seen.Add(t); return Task.CompletedTask; } }, new Single("b") { Complete = t => { seen.Add(t); return Task.CompletedTask; } } };
        IMessageSource source = new SingleCallsSource([]);

        await source.CompleteBatchAsync(messages, cancellation.Token);

        seen.Should().Equal(cancellation.Token, cancellation.Token);
    }

    [Fact]
    public async Task CompleteBatch_ByDefault_RejectsAnInvalidBatch_NamingMessages()
    {
        IMessageSource source = new SingleCallsSource([]);

        await FluentActions.Awaiting(() => source.CompleteBatchAsync(null!)).Should().ThrowAsync<ArgumentNullException>().WithParameterName("messages");
        await FluentActions.Awaiting(() => source.CompleteBatchAsync([])).Should().ThrowAsync<ArgumentException>().WithParameterName("messages")
            .WithMessage("A batch to settle must hold at least one message.*");
        var withNull = await FluentActions.Awaiting(() => source.CompleteBatchAsync([new Single("a"), null!])).Should().ThrowAsync<ArgumentNullException>().WithParameterName("messages");
        withNull.Which.Message.Should().StartWith("The message at index 1 of the batch is null.");
    }

    [Fact]
    public void TransportExceptions_WithoutAMessage_SayWhatHappened()
    {
        new TransientTransportException().Message.Should().Contain("transiently");
        new LeaseLostException().Message.Should().Contain("lease was lost");
        var inner = new InvalidOperationException("inner");
        new TransientTransportException("outer", inner).InnerException.Should().BeSameAs(inner);
        new LeaseLostException("outer", inner).InnerException.Should().BeSameAs(inner);
    }

    /// <summary>A source with single calls only: the batch calls are the interface's defaults.</summary>
    private sealed class SingleCallsSource(IEnumerable<ILeasedMessage> messages) : IMessageSource
    {
        private readonly Queue<ILeasedMessage> _messages = new(messages);

        public TimeSpan? LockDuration => null;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            Task.FromResult(_messages.TryDequeue(out var message) ? message : null);
    }

    private sealed class Single(string id) : ILeasedMessage
    {
        public int CompleteCalls { get; private set; }

        public Func<CancellationToken, Task> Complete { get; init; } = _ => Task.CompletedTask;

        public string MessageId => id;

        public ReadOnlyMemory<byte> Body => ReadOnlyMemory<byte>.Empty;

        public int DeliveryCount => 1;

        public DateTimeOffset LockedUntil => DateTimeOffset.MaxValue;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => Task.FromResult(LockedUntil);

        public Task CompleteAsync(CancellationToken cancellationToken = default)
        {
            CompleteCalls++;
            return Complete(cancellationToken);
        }

        public Task AbandonAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => Task.CompletedTask;
    }
}
