using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Transport;

/// <summary>Batch receive, the lock-duration check at the first receive, and receive failures, on a receiver fake.</summary>
public sealed class ReceiveTests
{
    private readonly VirtualTimeProvider _clock = new(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
    private readonly FakeReceiver _receiver = new();

    [Fact]
    public async Task A_batch_receive_asks_the_SDK_for_the_pump_s_count_with_the_wait_and_the_caller_s_token_so_a_stop_cancels_the_wait()
    {
        _receiver.Enqueue(Received("a"), Received("b"));
        var source = Source(new ServiceBusSourceOptions { MaxWaitTime = TimeSpan.FromMilliseconds(700) });
        using var stop = new CancellationTokenSource();

        var batch = await source.ReceiveBatchAsync(7, stop.Token);

        batch.Select(m => m.MessageId).Should().Equal("a", "b");
        _receiver.Receives.Should().Equal((7, TimeSpan.FromMilliseconds(700)));

        // A receive waiting for messages ends when the caller's token is canceled: the SDK got a token that follows it
        // (linked, so that deferred messages received for the pump can end the wait too).
        var waiting = new TaskCompletionSource<IReadOnlyList<ServiceBusReceivedMessage>>();
        _receiver.Enqueue((_, _) => waiting.Task);
        var pending = source.ReceiveBatchAsync(7, stop.Token);
        var sdkToken = _receiver.ReceiveTokens[^1];
        sdkToken.IsCancellationRequested.Should().BeFalse();
        await stop.CancelAsync();
        sdkToken.IsCancellationRequested.Should().BeTrue("the caller's stop reaches the SDK's receive");
        waiting.SetCanceled(sdkToken);
        await pending.Invoking(p => p).Should().ThrowAsync<OperationCanceledException>();
    }

    [Fact]
    public async Task The_first_receive_opens_the_management_link_once_with_a_peek_past_the_last_message()
    {
        _receiver.Enqueue(Received("a"));
        _receiver.Enqueue(Received("b"));
        var source = Source();

        await source.ReceiveBatchAsync(1);
        await source.ReceiveBatchAsync(1);

        _receiver.Calls.Should().Equal("peek", "receive", "receive");
        _receiver.Peeks.Should().Equal(long.MaxValue);
    }

    [Fact]
    public async Task The_first_messages_are_returned_once_the_management_link_is_open_so_their_first_renewal_does_not_wait_for_it()
    {
        var opened = new TaskCompletionSource<ServiceBusReceivedMessage?>();
        _receiver.OnPeek = _ => opened.Task;
        _receiver.Enqueue(Received("a"));
        var source = Source();

        var receive = source.ReceiveBatchAsync(1);
        _receiver.Calls.Should().Equal("peek", "receive");
        receive.IsCompleted.Should().BeFalse();
        opened.SetResult(null);

        (await receive).Should().ContainSingle();
    }

    [Fact]
    public async Task A_failed_peek_does_not_fail_the_receive()
    {
        _receiver.OnPeek = _ => Task.FromException<ServiceBusReceivedMessage?>(new ServiceBusException("denied", ServiceBusFailureReason.ServiceCommunicationProblem));
        _receiver.Enqueue(Received("a"));
        var source = Source();

        (await source.ReceiveBatchAsync(1)).Should().ContainSingle();
        source.Fault.Should().BeNull();
    }

    [Fact]
    public async Task An_empty_receive_is_an_empty_list_and_a_canceled_one_is_not_sent()
    {
        var source = Source();
        using var stop = new CancellationTokenSource();
        await stop.CancelAsync();

        (await source.ReceiveBatchAsync(3)).Should().BeEmpty();
        (await source.ReceiveAsync()).Should().BeNull();
        await source.Invoking(s => s.ReceiveBatchAsync(3, stop.Token)).Should().ThrowAsync<OperationCanceledException>();
        _receiver.Receives.Should().HaveCount(2);
        await source.Invoking(s => s.ReceiveBatchAsync(0)).Should().ThrowAsync<ArgumentOutOfRangeException>();
    }

    [Fact]
    public async Task A_transient_receive_failure_is_TransientTransportException_and_the_next_receive_works()
    {
        _receiver.EnqueueFailure(new ServiceBusException("busy", ServiceBusFailureReason.ServiceBusy));
        _receiver.Enqueue(Received("a"));
        var source = Source();

        await source.Invoking(s => s.ReceiveBatchAsync(1)).Should().ThrowAsync<TransientTransportException>();
        (await source.ReceiveBatchAsync(1)).Should().ContainSingle();
        source.Fault.Should().BeNull();
    }

    [Theory]
    [InlineData(ServiceBusFailureReason.MessagingEntityNotFound, "has no queue 'orders'")]
    [InlineData(ServiceBusFailureReason.MessagingEntityDisabled, "queue 'orders' is disabled")]
    public async Task A_missing_or_disabled_entity_fails_each_receive_naming_it_and_the_next_receive_waits_for_the_backoff(ServiceBusFailureReason reason, string named)
    {
        for (var i = 0; i < 5; i++)
        {
            _receiver.EnqueueFailure(new ServiceBusException("entity", reason));
        }

        _receiver.Enqueue(Received("a"));
        var source = Source();

        var first = (await source.Invoking(s => s.ReceiveBatchAsync(1)).Should().ThrowAsync<InvalidOperationException>()).Which;
        first.Message.Should().Contain(named).And.Contain("tries again in 00:00:01");
        first.InnerException.Should().BeOfType<ServiceBusException>().Which.Reason.Should().Be(reason);
        source.Fault.Should().BeNull("a missing or disabled entity is a state of the namespace, not of the source");

        // 1 s, 2 s, 4 s, then 8 s (and 8 s again) after each failure in a row: the receive waits, then is sent.
        foreach (var backoff in new[] { 1, 2, 4, 8 })
        {
            var sent = _receiver.Receives.Count;
            var receive = source.ReceiveBatchAsync(1);
            _clock.Advance(TimeSpan.FromSeconds(backoff) - TimeSpan.FromMilliseconds(1));
            receive.IsCompleted.Should().BeFalse($"the receive waits for the {backoff} s backoff");
            _receiver.Receives.Should().HaveCount(sent);
            _clock.Advance(TimeSpan.FromMilliseconds(1));
            var next = backoff == 8 ? 8 : backoff * 2;
            (await receive.Invoking(r => r).Should().ThrowAsync<InvalidOperationException>()).Which.Message.Should().Contain($"tries again in 00:00:0{next}");
            _receiver.Receives.Should().HaveCount(sent + 1);
        }

        var found = source.ReceiveBatchAsync(1);
        _clock.Advance(TimeSpan.FromSeconds(8));
        (await found).Should().ContainSingle("the entity is there now");

        // A receive that reached the entity starts the backoff over.
        _receiver.EnqueueFailure(new ServiceBusException("entity", reason));
        (await source.Invoking(s => s.ReceiveBatchAsync(1)).Should().ThrowAsync<InvalidOperationException>()).Which.Message.Should().Contain("tries again in 00:00:01");
    }

    [Fact]
    public async Task A_receive_waiting_for_the_backoff_is_canceled_without_being_sent()
    {
        _receiver.EnqueueFailure(new ServiceBusException("not found", ServiceBusFailureReason.MessagingEntityNotFound));
        var source = Source();
        await source.Invoking(s => s.ReceiveBatchAsync(1)).Should().ThrowAsync<InvalidOperationException>();
        using var stop = new CancellationTokenSource();

        var receive = source.ReceiveBatchAsync(1, stop.Token);
        await stop.CancelAsync();

        await receive.Invoking(r => r).Should().ThrowAsync<OperationCanceledException>();
        _receiver.Receives.Should().HaveCount(1);
    }

    [Fact]
    public async Task After_a_missing_entity_the_management_link_is_opened_again_alongside_the_next_receive()
    {
        _receiver.EnqueueFailure(new ServiceBusException("not found", ServiceBusFailureReason.MessagingEntityNotFound));
        _receiver.Enqueue(Received("a"));
        var source = Source();

        await source.Invoking(s => s.ReceiveBatchAsync(1)).Should().ThrowAsync<InvalidOperationException>();
        var receive = source.ReceiveBatchAsync(1);
        _clock.Advance(TimeSpan.FromSeconds(1));
        (await receive).Should().ContainSingle();

        _receiver.Calls.Should().Equal("peek", "receive", "peek", "receive");
    }

    [Fact]
    public async Task Missing_rights_stop_the_source_with_an_exception_naming_the_entity_and_the_right()
    {
        _receiver.EnqueueFailure(new UnauthorizedAccessException("no Listen claim"));
        var source = Source();

        (await source.Invoking(s => s.ReceiveBatchAsync(1)).Should().ThrowAsync<InvalidOperationException>()).Which.Message.Should().Contain("queue 'orders'").And.Contain("Listen");
    }

    [Fact]
    public async Task A_lock_duration_that_matches_the_first_receive_is_kept()
    {
        _receiver.Enqueue(Received("a", TimeSpan.FromSeconds(29)), Received("b", TimeSpan.FromSeconds(30)));
        var source = Source(new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(31) });

        (await source.ReceiveBatchAsync(2)).Should().HaveCount(2);

        source.ObservedLockDuration.Should().Be(TimeSpan.FromSeconds(30));
        ((IMessageSource)source).LockDuration.Should().Be(TimeSpan.FromSeconds(31));
    }

    [Theory]
    [InlineData(60, 30)]
    [InlineData(10, 30)]
    public async Task A_wrong_lock_duration_is_caught_at_the_first_receive_and_its_messages_are_released(int configuredSeconds, int brokerSeconds)
    {
        _receiver.Enqueue(Received("a", TimeSpan.FromSeconds(brokerSeconds)), Received("b", TimeSpan.FromSeconds(brokerSeconds)));
        var source = Source(new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(configuredSeconds) });

        (await source.Invoking(s => s.ReceiveBatchAsync(2)).Should().ThrowAsync<InvalidOperationException>())
            .Which.Message.Should().Contain("is wrong").And.Contain("ServiceBusSourceOptions.LockDuration");

        _receiver.Calls.Count(c => c == "abandon").Should().Be(2);
        source.Fault.Should().NotBeNull();
        await source.Invoking(s => s.ReceiveBatchAsync(2)).Should().ThrowAsync<InvalidOperationException>();
    }

    [Fact]
    public async Task A_first_receive_answered_late_is_not_taken_for_a_wrong_lock_duration()
    {
        // The broker locks the messages for 30 s when the receive is sent; the answer reaches the source 5 s later (a
        // starved thread pool), so only 25 s of the lock are left on arrival: more than the 2 s tolerance short of 30 s.
        EnqueueAnsweredLate(lockFor: TimeSpan.FromSeconds(30), late: TimeSpan.FromSeconds(5));
        var source = Source(new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(30) });

        (await source.ReceiveBatchAsync(1)).Should().ContainSingle();

        source.Fault.Should().BeNull();
        source.ObservedLockDuration.Should().Be(TimeSpan.FromSeconds(25));
        _receiver.Calls.Should().NotContain("abandon");
    }

    [Fact]
    public async Task A_lock_shorter_than_configured_is_caught_even_when_the_first_receive_was_answered_late()
    {
        EnqueueAnsweredLate(lockFor: TimeSpan.FromSeconds(30), late: TimeSpan.FromSeconds(5));
        var source = Source(new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(40) });

        (await source.Invoking(s => s.ReceiveBatchAsync(1)).Should().ThrowAsync<InvalidOperationException>()).Which.Message.Should().Contain("is wrong");
        _receiver.Calls.Should().Contain("abandon");
    }

    [Fact]
    public async Task Without_a_lock_duration_the_first_receive_only_observes_it()
    {
        _receiver.Enqueue(Received("a", TimeSpan.FromSeconds(45)));
        var source = Source();

        (await source.ReceiveBatchAsync(1)).Should().ContainSingle();

        ((IMessageSource)source).LockDuration.Should().BeNull();
        source.ObservedLockDuration.Should().Be(TimeSpan.FromSeconds(45));
    }

    [Fact]
    public void Completions_are_single_calls_so_the_pump_sends_them_concurrently()
    {
        ((IMessageSource)Source()).CompletesBatchesNatively.Should().BeFalse();
    }

    /// <summary>A receive whose messages the broker locks when it is sent, answered <paramref name="late"/> later.</summary>
    private void EnqueueAnsweredLate(TimeSpan lockFor, TimeSpan late) =>
        _receiver.Enqueue((_, _) =>
        {
            IReadOnlyList<ServiceBusReceivedMessage> batch = [Received("a", lockFor)];
            _clock.Advance(late);
            return Task.FromResult(batch);
        });

    private ServiceBusMessageSource Source(ServiceBusSourceOptions? options = null)
    {
        options ??= new ServiceBusSourceOptions();
        options.TimeProvider = _clock;
        return new ServiceBusMessageSource(_receiver, options);
    }

    private ServiceBusReceivedMessage Received(string id, TimeSpan? lockFor = null) =>
        Messages.Received(id, _clock.GetUtcNow() + (lockFor ?? TimeSpan.FromSeconds(30)));
}
