using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Transport;

/// <summary>Renewal, settlement and the one mapping of the SDK's failures, on a receiver fake and virtual time.</summary>
public sealed class LeasedMessageTests
{
    private readonly VirtualTimeProvider _clock = new(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
    private readonly FakeReceiver _receiver = new();

    [Fact]
    public async Task Renew_reads_the_new_expiry_back_from_the_message()
    {
        var message = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        var renewedTo = _clock.GetUtcNow() + TimeSpan.FromSeconds(45);
        _receiver.OnRenew = (_, _) => Task.FromResult(renewedTo);

        var lockedUntil = await message.RenewLockAsync();

        lockedUntil.Should().Be(renewedTo);
        message.LockedUntil.Should().Be(renewedTo);
        ((ServiceBusLeasedMessage)message).Message.LockedUntil.Should().Be(renewedTo);
    }

    public static TheoryData<ServiceBusFailureReason> LockLostReasons() => new()
    {
        ServiceBusFailureReason.MessageLockLost,
        ServiceBusFailureReason.SessionLockLost,
        ServiceBusFailureReason.MessageNotFound,
    };

    [Theory]
    [MemberData(nameof(LockLostReasons))]
    public async Task A_lost_lock_is_LeaseLostException_on_renew_and_on_settle(ServiceBusFailureReason reason)
    {
        var message = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        var failure = new ServiceBusException("gone", reason);
        _receiver.OnRenew = (_, _) => Task.FromException<DateTimeOffset>(failure);
        _receiver.OnSettle = (_, _, _) => Task.FromException(failure);

        (await message.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>()).Which.InnerException.Should().BeSameAs(failure);
        (await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<LeaseLostException>()).Which.InnerException.Should().BeSameAs(failure);
        (await message.Invoking(m => m.AbandonAsync()).Should().ThrowAsync<LeaseLostException>()).Which.InnerException.Should().BeSameAs(failure);
        (await message.Invoking(m => m.DeadLetterAsync("poison")).Should().ThrowAsync<LeaseLostException>()).Which.InnerException.Should().BeSameAs(failure);
    }

    public static TheoryData<ServiceBusFailureReason> TransientReasons() => new()
    {
        ServiceBusFailureReason.ServiceBusy,
        ServiceBusFailureReason.ServiceTimeout,
        ServiceBusFailureReason.ServiceCommunicationProblem,
    };

    [Theory]
    [MemberData(nameof(TransientReasons))]
    public async Task A_transient_failure_is_TransientTransportException(ServiceBusFailureReason reason)
    {
        var message = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        var failure = new ServiceBusException("try again", reason);
        _receiver.OnRenew = (_, _) => Task.FromException<DateTimeOffset>(failure);
        _receiver.OnSettle = (_, _, _) => Task.FromException(failure);

        (await message.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<TransientTransportException>()).Which.InnerException.Should().BeSameAs(failure);
        (await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<TransientTransportException>()).Which.InnerException.Should().BeSameAs(failure);
    }

    [Fact]
    public async Task A_failure_that_is_neither_lost_nor_transient_is_left_as_it_is()
    {
        var message = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        var failure = new ServiceBusException("too big", ServiceBusFailureReason.QuotaExceeded);
        _receiver.OnSettle = (_, _, _) => Task.FromException(failure);

        (await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<ServiceBusException>()).Which.Should().BeSameAs(failure);
        message.As<ServiceBusLeasedMessage>().IsSettled.Should().BeFalse();
    }

    [Fact]
    public async Task A_renewal_canceled_by_its_caller_is_OperationCanceledException()
    {
        var message = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        using var cancel = new CancellationTokenSource();
        _receiver.OnRenew = async (_, ct) =>
        {
            await Task.Delay(Timeout.InfiniteTimeSpan, ct);
            return DateTimeOffset.MinValue;
        };

        var renewal = message.RenewLockAsync(cancel.Token);
        await cancel.CancelAsync();

        await renewal.Invoking(r => r).Should().ThrowAsync<OperationCanceledException>();
    }

    [Fact]
    public async Task Settlements_reach_the_receiver_and_a_second_settlement_is_a_lost_lease()
    {
        var completed = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        var abandoned = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        var deadLettered = (ServiceBusLeasedMessage)await ReceiveOneAsync(TimeSpan.FromSeconds(30));

        await completed.CompleteAsync();
        await abandoned.AbandonAsync();
        await deadLettered.DeadLetterAsync("poison", "the total was negative");

        _receiver.Calls.Should().ContainInOrder("complete", "abandon", "dead-letter");
        _receiver.DeadLetters.Should().Equal(("poison", "the total was negative"));
        await completed.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        await deadLettered.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>();
        _receiver.Calls.Count(c => c == "complete").Should().Be(1);
    }

    [Fact]
    public async Task Dead_letter_requires_a_reason()
    {
        var message = (ServiceBusLeasedMessage)await ReceiveOneAsync(TimeSpan.FromSeconds(30));

        (await message.Invoking(m => m.DeadLetterAsync(" ", "d")).Should().ThrowAsync<ArgumentException>()).Which.ParamName.Should().Be("reason");
    }

    [Fact]
    public async Task A_settlement_after_the_known_expiry_is_sent_and_the_broker_decides()
    {
        // LockedUntil is the last answered renewal's expiry; a renewal still unanswered may have moved the broker's lock.
        var message = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        _clock.Advance(TimeSpan.FromSeconds(31));

        await message.CompleteAsync();

        _receiver.Calls.Should().ContainSingle(c => c == "complete");
        ((ServiceBusLeasedMessage)message).IsSettled.Should().BeTrue();
    }

    [Fact]
    public async Task A_settlement_after_the_known_expiry_that_the_broker_refuses_is_a_lost_lease()
    {
        var message = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        _clock.Advance(TimeSpan.FromSeconds(31));
        var failure = new ServiceBusException("expired", ServiceBusFailureReason.MessageLockLost);
        _receiver.OnSettle = (_, _, _) => Task.FromException(failure);

        (await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<LeaseLostException>()).Which.InnerException.Should().BeSameAs(failure);
        _receiver.Calls.Should().ContainSingle(c => c == "complete");
    }

    [Fact]
    public async Task A_settlement_answered_after_the_known_expiry_keeps_the_broker_answer()
    {
        // The answer waits (a starved pool) past LockedUntil: the broker applied the completion, and so the call succeeds.
        var message = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        var answer = new TaskCompletionSource();
        _receiver.OnSettle = (_, _, _) => answer.Task;

        var complete = message.CompleteAsync();
        _clock.Advance(TimeSpan.FromSeconds(45));
        complete.IsCompleted.Should().BeFalse("the broker has not answered yet");
        answer.SetResult();

        await complete;
        ((ServiceBusLeasedMessage)message).IsSettled.Should().BeTrue();
    }

    [Fact]
    public async Task A_settlement_the_broker_does_not_answer_ends_with_the_callers_token()
    {
        var message = await ReceiveOneAsync(TimeSpan.FromSeconds(30));
        _receiver.OnSettle = (_, _, ct) => Task.Delay(Timeout.InfiniteTimeSpan, ct);
        using var cancellation = new CancellationTokenSource();

        var complete = message.CompleteAsync(cancellation.Token);
        _clock.Advance(TimeSpan.FromSeconds(60));
        complete.IsCompleted.Should().BeFalse();
        await cancellation.CancelAsync();

        await complete.Invoking(c => c).Should().ThrowAsync<OperationCanceledException>();
        ((ServiceBusLeasedMessage)message).IsSettled.Should().BeFalse();
    }

    [Fact]
    public async Task Headers_are_the_application_properties_as_strings_with_the_producer_trace_context()
    {
        const string traceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        _receiver.Enqueue(Messages.Received("m1", _clock.GetUtcNow().AddSeconds(30), properties: new Dictionary<string, object>
        {
            ["Diagnostic-Id"] = traceParent,
            ["attempt"] = 3,
            ["amount"] = 1.5,
        }));
        var source = new ServiceBusMessageSource(_receiver, new ServiceBusSourceOptions { TimeProvider = _clock });

        var message = (await source.ReceiveBatchAsync(1)).Single();

        message.Headers.Should().Contain("traceparent", traceParent).And.Contain("attempt", "3").And.Contain("amount", "1.5");
        message.Body.ToArray().Should().Equal(BinaryData.FromString("body of m1").ToArray());
        message.DeliveryCount.Should().Be(1);
    }

    private async Task<ILeasedMessage> ReceiveOneAsync(TimeSpan lockFor)
    {
        _receiver.Enqueue(Messages.Received(Guid.NewGuid().ToString("N"), _clock.GetUtcNow() + lockFor));
        var source = new ServiceBusMessageSource(_receiver, new ServiceBusSourceOptions { TimeProvider = _clock });
        return (await source.ReceiveBatchAsync(1)).Single();
    }
}
