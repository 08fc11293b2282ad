using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Transport;

/// <summary>
/// How a failed receive or accept is classified (<see cref="ServiceBusErrors.TranslateReceive"/>): by the SDK's exception
/// type and <see cref="ServiceBusException.Reason"/>, never by the text of its message; and the session mismatch the SDK
/// gives no reason for, end to end on the test broker.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class ReceiveErrorTests
{
    private static readonly ServiceBusEntity Orders = ServiceBusEntity.Queue("orders");

    [Theory]
    [InlineData(false, "requires sessions", "ServiceBusSessionMessageSource")]
    [InlineData(true, "does not require sessions", "ServiceBusMessageSource")]
    public void A_plain_InvalidOperationException_is_the_session_mismatch_whatever_its_text(bool sessions, string named, string source)
    {
        // The SDK maps the broker's amqp:not-allowed to a plain InvalidOperationException with no reason: its text is
        // the broker's, which this library does not read.
        var refused = new InvalidOperationException("Not allowed.");

        var translated = ServiceBusErrors.TranslateReceive(refused, Orders, sessions, CancellationToken.None);

        translated.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("queue 'orders'").And.Contain(named).And.Contain(source).And.Contain("Not allowed.");
        translated!.InnerException.Should().BeSameAs(refused);
    }

    [Fact]
    public void An_InvalidOperationException_subtype_that_mentions_sessions_is_not_taken_for_a_mismatch()
    {
        var subtype = new SessionWordedException("The session handler failed.");

        ServiceBusErrors.TranslateReceive(subtype, Orders, sessions: false, CancellationToken.None).Should().BeNull("it is rethrown as it is");
    }

    [Theory]
    [InlineData(ServiceBusFailureReason.ServiceTimeout, true)]
    [InlineData(ServiceBusFailureReason.SessionCannotBeLocked, false)]
    [InlineData(ServiceBusFailureReason.GeneralError, false)]
    public void A_ServiceBusException_that_mentions_sessions_is_classified_by_its_reason(ServiceBusFailureReason reason, bool transient)
    {
        var failure = new ServiceBusException("the session receiver could not be created", reason);

        var translated = ServiceBusErrors.TranslateReceive(failure, Orders, sessions: false, CancellationToken.None);

        if (transient)
        {
            translated.Should().BeOfType<TransientTransportException>();
        }
        else
        {
            translated.Should().BeNull("neither a mismatch nor transient: rethrown as it is");
        }
    }

    [Fact]
    public async Task A_message_source_on_a_session_queue_fails_its_receive_naming_the_mismatch()
    {
        await using var sb = await SbHarness.StartAsync();
        sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { RequiresSession = true });
        await using var source = await sb.Transport.OpenAsync(Orders);

        var failure = await source.Invoking(s => s.ReceiveBatchAsync(1)).Should().ThrowAsync<InvalidOperationException>();

        failure.Which.Message.Should().Contain("queue 'orders'").And.Contain("requires sessions").And.Contain("ServiceBusSessionMessageSource");
        failure.Which.InnerException.Should().BeOfType<InvalidOperationException>("the SDK gives the broker's refusal no reason: a plain InvalidOperationException");
    }

    [Fact]
    public async Task A_session_accept_on_a_queue_without_sessions_fails_naming_the_mismatch()
    {
        await using var sb = await SbHarness.StartAsync();
        sb.Broker.CreateQueue("orders").Send("a"u8.ToArray(), "a");

        var failure = await sb.Transport.Invoking(t => t.AcceptNextSessionAsync(Orders)).Should().ThrowAsync<InvalidOperationException>();

        failure.Which.Message.Should().Contain("queue 'orders'").And.Contain("does not require sessions").And.Contain("ServiceBusMessageSource");
        failure.Which.InnerException.Should().BeOfType<InvalidOperationException>("the SDK gives the broker's refusal no reason: a plain InvalidOperationException");
    }

    private sealed class SessionWordedException(string message) : InvalidOperationException(message);
}
