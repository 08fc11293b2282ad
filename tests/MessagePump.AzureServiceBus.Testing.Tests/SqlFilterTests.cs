using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Framing;
using PriorityAsync.MessagePump.AzureServiceBus.Testing.Rules;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

/// <summary>The SQL filter subset the broker's README lists, judged against one message (SQL's three-valued logic: unknown is no match).</summary>
public sealed class SqlFilterTests
{
    private static readonly FilterMessage Message = Build();

    [Theory]
    [InlineData("sys.Label = 'red'", true)]
    [InlineData("sys.Label <> 'red'", false)]
    [InlineData("sys.Label != 'blue'", true)]
    [InlineData("sys.MessageId = 'm-1' AND sys.CorrelationId = 'c-1'", true)]
    [InlineData("sys.SessionId = 's' AND sys.ReplyToSessionId = 'rs' AND sys.To = 'to' AND sys.ReplyTo = 'rt' AND sys.ContentType = 'text/plain'", true)]
    [InlineData("quantity > 2 AND quantity >= 5 AND quantity < 6 AND quantity <= 5", true)]
    [InlineData("quantity = 5.0", true)]
    [InlineData("price > 9.5", true)]
    [InlineData("quantity > 5 OR sys.Label = 'red'", true)]
    [InlineData("NOT (quantity > 5)", true)]
    [InlineData("user.region IN ('eu', 'us')", true)]
    [InlineData("region NOT IN ('eu', 'us')", false)]
    [InlineData("sys.Label LIKE 'r%'", true)]
    [InlineData("sys.Label LIKE 'r_d'", true)]
    [InlineData("sys.Label LIKE 'r_'", false)]
    [InlineData("code LIKE '50!%' ESCAPE '!'", true)]
    [InlineData("sys.Label NOT LIKE 'b%'", true)]
    [InlineData("missing IS NULL AND region IS NOT NULL", true)]
    [InlineData("missing = 1", false)]
    [InlineData("NOT (missing = 1)", false)]
    [InlineData("missing = 1 OR flag = TRUE", true)]
    [InlineData("[odd name] = 'x'", true)]
    [InlineData("region = 5", false)]
    [InlineData("1=1", true)]
    [InlineData("1=0", false)]
    public void An_expression_of_the_subset_judges_the_message(string expression, bool matches) =>
        SqlFilter.Parse(expression).Matches(Message).Should().Be(matches, expression);

    [Theory]
    [InlineData("quantity + 1 > 2")]
    [InlineData("EXISTS(quantity)")]
    [InlineData("sys.Unknown = 'x'")]
    [InlineData("sys.Label = 'red")]
    [InlineData("quantity >")]
    [InlineData("quantity")]
    [InlineData("a = 1 b = 2")]
    public void An_expression_outside_the_subset_is_refused(string expression) =>
        FluentActions.Invoking(() => SqlFilter.Parse(expression)).Should().Throw<FormatException>();

    private static FilterMessage Build()
    {
        using var message = AmqpMessage.Create(new Data { Value = new ArraySegment<byte>([1]) });
        message.Properties.MessageId = "m-1";
        message.Properties.CorrelationId = "c-1";
        message.Properties.Subject = "red";
        message.Properties.GroupId = "s";
        message.Properties.ReplyToGroupId = "rs";
        message.Properties.To = "to";
        message.Properties.ReplyTo = "rt";
        message.Properties.ContentType = "text/plain";
        message.ApplicationProperties.Map["quantity"] = 5;
        message.ApplicationProperties.Map["price"] = 9.75;
        message.ApplicationProperties.Map["region"] = "eu";
        message.ApplicationProperties.Map["code"] = "50%";
        message.ApplicationProperties.Map["flag"] = true;
        message.ApplicationProperties.Map["odd name"] = "x";
        return FilterMessage.From(AmqpCodec.ToBytes(message));
    }
}
