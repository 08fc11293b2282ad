using System.Net.Security;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Transactions;
using Azure.Messaging.ServiceBus;
using Azure.Messaging.ServiceBus.Administration;
using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Encoding;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// The README's "Not spoken" list, each item answered as the README says: what the client reports, or that the thing is
/// simply not there (a duplicate is delivered twice, a token with any key is accepted, a TLS or WebSocket handshake finds
/// no partner).
/// </summary>
[Trait("Conformance", "NotSpoken")]
public sealed class ConformanceNotSpoken
{
    [Fact]
    public async Task Another_management_operation_is_answered_501_not_implemented()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("batch-delete");
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var amqp = await RawAmqp.ConnectAsync(harness.Broker.Port, "MSSBCBS");
        using var request = AmqpMessage.Create(new AmqpValue { Value = new AmqpMap { [new MapKey("message-count")] = 10 } });
        request.ApplicationProperties.Map["operation"] = "com.microsoft:batch-delete-messages"; // the 7.21 client keeps DeleteMessagesAsync internal

        using var response = await amqp.RequestAsync("batch-delete/$management", request);

        response.ApplicationProperties.Map["statusCode"].Should().Be(501);
        response.ApplicationProperties.Map["errorCondition"].Should().Be(new AmqpSymbol("amqp:not-implemented"));
        queue.ActiveCount.Should().Be(1);
    }

    [Fact]
    public async Task A_topic_has_no_management_node_so_ScheduleMessageAsync_fails_and_ScheduledEnqueueTime_works()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var subscription = harness.Broker.CreateTopic("events").CreateSubscription("all");
        await using var sender = harness.Client.CreateSender("events");
        var at = harness.Clock.GetUtcNow().AddMinutes(1);

        var schedule = () => sender.ScheduleMessageAsync(new ServiceBusMessage("x"), at);

        (await schedule.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessagingEntityNotFound);
        subscription.ScheduledCount.Should().Be(0);
        await sender.SendMessageAsync(new ServiceBusMessage("y") { ScheduledEnqueueTime = at });
        subscription.ScheduledCount.Should().Be(1);
    }

    [Fact]
    public async Task A_sql_rule_action_is_answered_not_implemented_which_the_client_reports_as_NotSupportedException()
    {
        await using var harness = await BrokerHarness.StartAsync();
        harness.Broker.CreateTopic("actions").CreateSubscription("sub");
        await using var manager = harness.Client.CreateRuleManager("actions", "sub");

        var action = () => manager.CreateRuleAsync(new CreateRuleOptions("action", new TrueRuleFilter()) { Action = new SqlRuleAction("SET quantity = 1") });

        await action.Should().ThrowAsync<NotSupportedException>();
        (await ConformanceRules.RulesOf(manager)).Should().ContainSingle("the rule was not added");
    }

    [Fact]
    public async Task There_is_no_duplicate_detection_a_message_id_sent_twice_is_delivered_twice()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("duplicates");
        await using var sender = harness.Client.CreateSender("duplicates");

        await sender.SendMessageAsync(new ServiceBusMessage("1") { MessageId = "same" });
        await sender.SendMessageAsync(new ServiceBusMessage("2") { MessageId = "same" });

        queue.ActiveCount.Should().Be(2);
    }

    [Fact]
    public async Task There_are_no_transactions_the_coordinator_link_is_refused_not_implemented_which_the_client_reports_as_NotSupportedException()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("transactions");
        await using var sender = harness.Client.CreateSender("transactions");

        var send = async () =>
        {
            using var scope = new TransactionScope(TransactionScopeAsyncFlowOption.Enabled);
            await sender.SendMessageAsync(new ServiceBusMessage("x"));
            scope.Complete();
        };

        await send.Should().ThrowAsync<NotSupportedException>();
        queue.ActiveCount.Should().Be(0);
    }

    [Fact]
    public void The_entity_options_offer_no_partitioning_auto_forwarding_duplicate_detection_or_size_limit_of_their_own()
    {
        var options = typeof(ServiceBusTestEntityOptions).GetProperties().Select(p => p.Name).ToList();

        options.Should().NotContain(name => name.Contains("Partition", StringComparison.OrdinalIgnoreCase)
            || name.Contains("Forward", StringComparison.OrdinalIgnoreCase)
            || name.Contains("Duplicate", StringComparison.OrdinalIgnoreCase)
            || name.Contains("Size", StringComparison.OrdinalIgnoreCase));
        typeof(ServiceBusTestBrokerOptions).GetProperty(nameof(ServiceBusTestBrokerOptions.MaxMessageSizeInBytes)).Should().NotBeNull("the one size limit is the broker's");
    }

    [Fact]
    public async Task There_is_no_entity_management_the_administration_client_creates_nothing()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var admin = new ServiceBusAdministrationClient(harness.Broker.ConnectionString, new ServiceBusAdministrationClientOptions { Retry = { MaxRetries = 0, NetworkTimeout = BrokerHarness.HangBound } });

        var create = () => admin.CreateQueueAsync("managed");

        await create.Should().ThrowAsync<Azure.RequestFailedException>("the client's HTTP request gets no answer from an AMQP port");
        harness.Broker.Invoking(b => b.GetQueue("managed")).Should().Throw<ArgumentException>();
    }

    [Fact]
    public async Task Tokens_are_not_checked_a_client_with_any_key_sends_and_receives()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("any-key");
        var connectionString = $"Endpoint=sb://127.0.0.1:{harness.Broker.Port};SharedAccessKeyName=nobody;SharedAccessKey=bm90LXRoZS1rZXk=;UseDevelopmentEmulator=true";
        await using var client = new ServiceBusClient(connectionString, BrokerHarness.ClientOptions(maxRetries: 0));
        await using var sender = client.CreateSender("any-key");
        await using var receiver = client.CreateReceiver("any-key");

        await sender.SendMessageAsync(new ServiceBusMessage("x") { MessageId = "x" });
        await receiver.CompleteMessageAsync(await Receive.OneAsync(receiver));

        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task There_is_no_TLS_a_TLS_handshake_on_the_port_fails()
    {
        await using var harness = await BrokerHarness.StartAsync();
        using var tcp = new TcpClient();
        await tcp.ConnectAsync("127.0.0.1", harness.Broker.Port);
        await using var tls = new SslStream(tcp.GetStream(), leaveInnerStreamOpen: false, (_, _, _, _) => true);

        var handshake = () => tls.AuthenticateAsClientAsync("127.0.0.1").WaitAsync(BrokerHarness.HangBound);

        await handshake.Should().ThrowAsync<IOException>("the broker answers the handshake by closing the connection");
    }

    [Fact]
    public async Task There_are_no_WebSockets_an_upgrade_on_the_port_fails()
    {
        await using var harness = await BrokerHarness.StartAsync();
        using var socket = new ClientWebSocket();
        socket.Options.AddSubProtocol("AMQPWSB10");
        using var bound = new CancellationTokenSource(BrokerHarness.HangBound);

        var connect = () => socket.ConnectAsync(new Uri($"ws://127.0.0.1:{harness.Broker.Port}/$servicebus/websocket"), bound.Token);

        await connect.Should().ThrowAsync<WebSocketException>();
        bound.IsCancellationRequested.Should().BeFalse("the broker answers the upgrade by closing the connection");
    }

    [Fact]
    public async Task A_deferred_message_carries_its_sequence_number_as_its_enqueue_sequence_number()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("deferred-enqueue-sequence");
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("deferred-enqueue-sequence");
        var message = await Receive.OneAsync(receiver);
        await receiver.DeferMessageAsync(message);

        var deferred = await receiver.ReceiveDeferredMessageAsync(message.SequenceNumber);

        deferred.EnqueuedSequenceNumber.Should().Be(deferred.SequenceNumber);
    }
}
