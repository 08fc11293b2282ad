using Azure.Messaging.ServiceBus;
using Azure.Messaging.ServiceBus.Administration;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>The README's dialect, "Subscription rules", through the client's ServiceBusRuleManager and the test API: which messages reach a subscription.</summary>
[Trait("Conformance", "Rules")]
public sealed class ConformanceRules
{
    [Fact]
    public async Task A_subscription_starts_with_the_default_true_rule_and_gets_every_message()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var topic = harness.Broker.CreateTopic("events");
        var all = topic.CreateSubscription("all");
        await using var manager = harness.Client.CreateRuleManager("events", "all");

        var rules = await RulesOf(manager);
        topic.Send("x"u8.ToArray(), messageId: "m");

        rules.Should().ContainSingle().Which.Should().Match<RuleProperties>(r => r.Name == RuleProperties.DefaultRuleName && r.Filter is TrueRuleFilter);
        all.ActiveCount.Should().Be(1);
    }

    [Fact]
    public async Task A_correlation_rule_given_at_creation_passes_only_matching_messages()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var topic = harness.Broker.CreateTopic("orders");
        var red = topic.CreateSubscription("red", rules: [ServiceBusTestRule.Correlation("red-eu", subject: "red", applicationProperties: new Dictionary<string, object> { ["region"] = "eu" })]);
        var none = topic.CreateSubscription("none", rules: []);
        await using var sender = harness.Client.CreateSender("orders");

        await sender.SendMessageAsync(new ServiceBusMessage("1") { MessageId = "red-eu", Subject = "red", ApplicationProperties = { ["region"] = "eu" } });
        await sender.SendMessageAsync(new ServiceBusMessage("2") { MessageId = "red-us", Subject = "red", ApplicationProperties = { ["region"] = "us" } });
        await sender.SendMessageAsync(new ServiceBusMessage("3") { MessageId = "blue-eu", Subject = "blue", ApplicationProperties = { ["region"] = "eu" } });
        await using var receiver = harness.Client.CreateReceiver("orders", "red");
        var received = await Receive.OneAsync(receiver);

        received.MessageId.Should().Be("red-eu");
        red.ActiveCount.Should().Be(0);
        none.ActiveCount.Should().Be(0, "a subscription without rules gets nothing");
    }

    [Fact]
    public async Task Rules_added_and_removed_through_the_rule_manager_filter_later_messages()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var topic = harness.Broker.CreateTopic("shop");
        var big = topic.CreateSubscription("big");
        await using var manager = harness.Client.CreateRuleManager("shop", "big");
        await manager.DeleteRuleAsync(RuleProperties.DefaultRuleName);
        await manager.CreateRuleAsync("big-red", new SqlRuleFilter("sys.Label = 'red' AND quantity > 2"));
        await manager.CreateRuleAsync("by-correlation", new CorrelationRuleFilter("vip"));
        await using var sender = harness.Client.CreateSender("shop");

        await sender.SendMessageAsync(new ServiceBusMessage("1") { MessageId = "small", Subject = "red", ApplicationProperties = { ["quantity"] = 1 } });
        await sender.SendMessageAsync(new ServiceBusMessage("2") { MessageId = "large", Subject = "red", ApplicationProperties = { ["quantity"] = 5 } });
        await sender.SendMessageAsync(new ServiceBusMessage("3") { MessageId = "vip", CorrelationId = "vip" });
        await sender.SendMessageAsync(new ServiceBusMessage("4") { MessageId = "no-quantity", Subject = "red" });
        await using var receiver = harness.Client.CreateReceiver("shop", "big");
        var received = await Receive.ExactlyAsync(receiver, 2);
        big.ActiveCount.Should().Be(0);

        await manager.DeleteRuleAsync("big-red");
        await sender.SendMessageAsync(new ServiceBusMessage("5") { MessageId = "large-again", Subject = "red", ApplicationProperties = { ["quantity"] = 5 } });

        received.Select(m => m.MessageId).Should().Equal("large", "vip");
        big.ActiveCount.Should().Be(0, "the rule that passed it was removed");
    }

    [Fact]
    public async Task GetRulesAsync_lists_the_rules_with_their_filters()
    {
        await using var harness = await BrokerHarness.StartAsync();
        harness.Broker.CreateTopic("listed").CreateSubscription("sub");
        await using var manager = harness.Client.CreateRuleManager("listed", "sub");
        var correlation = new CorrelationRuleFilter { CorrelationId = "c", Subject = "s", ContentType = "application/json" };
        correlation.ApplicationProperties["n"] = 7;
        await manager.CreateRuleAsync("sql", new SqlRuleFilter("color IN ('red', 'blue')"));
        await manager.CreateRuleAsync("correlation", correlation);
        await manager.CreateRuleAsync("never", new FalseRuleFilter());

        var rules = await RulesOf(manager);

        rules.Select(r => r.Name).Should().Equal(RuleProperties.DefaultRuleName, "sql", "correlation", "never");
        rules[1].Filter.Should().BeOfType<SqlRuleFilter>().Which.SqlExpression.Should().Be("color IN ('red', 'blue')");
        rules[2].Filter.Should().Be(correlation);
        rules[3].Filter.Should().BeOfType<FalseRuleFilter>();
        rules.Should().OnlyContain(r => r.Action == null);
    }

    [Fact]
    public async Task A_rule_name_taken_twice_and_a_missing_rule_are_answered_as_the_service_answers()
    {
        await using var harness = await BrokerHarness.StartAsync();
        harness.Broker.CreateTopic("named").CreateSubscription("sub");
        await using var manager = harness.Client.CreateRuleManager("named", "sub");

        var twice = () => manager.CreateRuleAsync(RuleProperties.DefaultRuleName, new TrueRuleFilter());
        var missing = () => manager.DeleteRuleAsync("missing");

        (await twice.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessagingEntityAlreadyExists);
        (await missing.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessagingEntityNotFound);
    }

    [Fact]
    public async Task A_filter_outside_the_parsed_subset_is_refused_as_the_service_refuses_a_bad_filter()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var topic = harness.Broker.CreateTopic("refused");
        topic.CreateSubscription("sub");
        await using var manager = harness.Client.CreateRuleManager("refused", "sub");

        var arithmetic = () => manager.CreateRuleAsync("arithmetic", new SqlRuleFilter("quantity + 1 > 2"));

        (await arithmetic.Should().ThrowAsync<ArgumentException>()).Which.Message.Should().Contain("quantity + 1 > 2");
        (await RulesOf(manager)).Should().ContainSingle("the rule was not added");
        FluentActions.Invoking(() => ServiceBusTestRule.Sql("bad", "EXISTS(color)")).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("expression");
        FluentActions.Invoking(() => topic.CreateSubscription("twice", rules: [ServiceBusTestRule.Sql("a", "1=1"), ServiceBusTestRule.Sql("A", "1=0")]))
            .Should().Throw<ArgumentException>().Which.ParamName.Should().Be("rules");
    }

    internal static async Task<List<RuleProperties>> RulesOf(ServiceBusRuleManager manager)
    {
        var rules = new List<RuleProperties>();
        await foreach (var rule in manager.GetRulesAsync())
        {
            rules.Add(rule);
        }

        return rules;
    }

    [Fact]
    public async Task A_sql_filter_names_application_properties_without_regard_to_case()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var topic = harness.Broker.CreateTopic("paint");
        var red = topic.CreateSubscription("red");
        await using var manager = harness.Client.CreateRuleManager("paint", "red");
        await manager.DeleteRuleAsync(RuleProperties.DefaultRuleName);
        await manager.CreateRuleAsync("red-sql", new SqlRuleFilter("Color = 'RedSql'"));
        await using var sender = harness.Client.CreateSender("paint");

        await sender.SendMessageAsync(new ServiceBusMessage("1") { MessageId = "lower", ApplicationProperties = { ["color"] = "RedSql" } });
        await sender.SendMessageAsync(new ServiceBusMessage("2") { MessageId = "upper", ApplicationProperties = { ["COLOR"] = "RedSql" } });
        await sender.SendMessageAsync(new ServiceBusMessage("3") { MessageId = "blue", ApplicationProperties = { ["color"] = "Blue" } });

        red.ActiveCount.Should().Be(2, "the rule names the property Color, the messages color and COLOR");
    }
}
