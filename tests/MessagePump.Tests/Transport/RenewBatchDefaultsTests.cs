namespace PriorityAsync.MessagePump.Tests.Transport;

/// <summary>
/// The default batch renewal of <see cref="IMessageSource"/>, for an adapter that has only single renewals (Azure
/// Service Bus's SDK renews one message per call): every message's own renewal, issued at once, with an outcome per
/// message in order.
/// </summary>
public class RenewBatchDefaultsTests
{
    [Fact]
    public async Task RenewBatch_ByDefault_RenewsEachWithItsOwnCall_AndReportsEachOutcomeInOrder()
    {
        var until = new DateTimeOffset(2026, 11, 25, 0, 0, 30, TimeSpan.Zero);
        var lost = new LeaseLostException("gone");
        var thrown = new TransientTransportException("busy");
        var messages = new[]
        {
            new Renewable("ok") { Renew = _ => Task.FromResult(until) },
            new Renewable("faulted") { Renew = _ => Task.FromException<DateTimeOffset>(lost) },
            new Renewable("threw") { Renew = _ => throw thrown },
            new Renewable("canceled") { Renew = _ => Task.FromCanceled<DateTimeOffset>(new CancellationToken(canceled: true)) },
            new Renewable("ok too") { Renew = _ => Task.FromResult(until.AddSeconds(1)) },
        };
        IMessageSource source = new SingleCallsSource();

        var outcomes = await source.RenewBatchAsync(messages);

        outcomes.Should().HaveCount(5);
        outcomes[0].Should().Be(LeaseRenewal.Renewed(until));
        outcomes[0].IsRenewed.Should().BeTrue();
        outcomes[1].Failure.Should().BeSameAs(lost);
        outcomes[1].IsRenewed.Should().BeFalse();
        outcomes[2].Failure.Should().BeSameAs(thrown);
        outcomes[3].Failure.Should().BeAssignableTo<OperationCanceledException>().Which.Message.Should().Be("The renew call was canceled.");
        outcomes[4].LockedUntil.Should().Be(until.AddSeconds(1));
        messages.Select(m => m.RenewCalls).Should().Equal(1, 1, 1, 1, 1);
        source.RenewsBatchesNatively.Should().BeFalse("a source with single renewals only");
    }

    [Fact]
    public async Task RenewBatch_ByDefault_IssuesEveryCallAtOnce_AndWaitsForEveryAnswer()
    {
        var later = new TaskCompletionSource<DateTimeOffset>();
        using var cancellation = new CancellationTokenSource();
        var seen = new List<CancellationToken>();
        var messages = new[]
        {
            new Renewable("slow") { Renew = t => { seen.Add(t); return later.Task; } },
            new Renewable("quick") { Renew = t => { seen.Add(t); return Task.FromResult(DateTimeOffset.UnixEpoch); } },
        };
        IMessageSource source = new SingleCallsSource();

        var batch = source.RenewBatchAsync(messages, cancellation.Token);

        batch.IsCompleted.Should().BeFalse("the slow call has not answered");
        messages.Select(m => m.RenewCalls).Should().Equal(1, 1);
        seen.Should().Equal(cancellation.Token, cancellation.Token);
        later.SetResult(DateTimeOffset.UnixEpoch.AddSeconds(2));
        (await batch.WaitAsync(TimeSpan.FromSeconds(30))).Select(o => o.LockedUntil).Should().Equal(DateTimeOffset.UnixEpoch.AddSeconds(2), DateTimeOffset.UnixEpoch);
    }

    [Fact]
    public async Task RenewBatch_ByDefault_RejectsAnInvalidBatch_NamingMessages()
    {
        IMessageSource source = new SingleCallsSource();

        await FluentActions.Awaiting(() => source.RenewBatchAsync(null!)).Should().ThrowAsync<ArgumentNullException>().WithParameterName("messages");
        await FluentActions.Awaiting(() => source.RenewBatchAsync([])).Should().ThrowAsync<ArgumentException>().WithParameterName("messages")
            .WithMessage("A batch to renew must hold at least one message.*");
        var withNull = await FluentActions.Awaiting(() => source.RenewBatchAsync([new Renewable("a"), null!])).Should().ThrowAsync<ArgumentNullException>().WithParameterName("messages");
        withNull.Which.Message.Should().StartWith("The message at index 1 of the batch is null.");
    }

    [Fact]
    public void LeaseRenewal_Failed_NamesItsArgument_AndDescribesItself()
    {
        FluentActions.Invoking(() => LeaseRenewal.Failed(null!)).Should().Throw<ArgumentNullException>().WithParameterName("failure");
        LeaseRenewal.Failed(new LeaseLostException("gone")).ToString().Should().Be("failed: LeaseLostException");
        LeaseRenewal.Renewed(DateTimeOffset.UnixEpoch).ToString().Should().Be("renewed until 1970-01-01T00:00:00.0000000+00:00");
    }

    /// <summary>A source with single calls only: the batch calls are the interface's defaults.</summary>
    private sealed class SingleCallsSource : IMessageSource
    {
        public TimeSpan? LockDuration => null;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) => Task.FromResult<ILeasedMessage?>(null);
    }

    private sealed class Renewable(string id) : ILeasedMessage
    {
        public int RenewCalls { get; private set; }

        public Func<CancellationToken, Task<DateTimeOffset>> Renew { get; init; } = _ => Task.FromResult(DateTimeOffset.MaxValue);

        public string MessageId => id;

        public ReadOnlyMemory<byte> Body => ReadOnlyMemory<byte>.Empty;

        public int DeliveryCount => 1;

        public DateTimeOffset LockedUntil => DateTimeOffset.MaxValue;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
        {
            RenewCalls++;
            return Renew(cancellationToken);
        }

        public Task CompleteAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

        public Task AbandonAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => Task.CompletedTask;
    }
}
