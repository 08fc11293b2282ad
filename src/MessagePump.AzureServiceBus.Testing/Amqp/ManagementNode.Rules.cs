using System.Globalization;
using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Encoding;
using PriorityAsync.MessagePump.AzureServiceBus.Testing.Rules;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>Rule management of a subscription's $management node: add-rule, remove-rule, enumerate-rules.</summary>
internal sealed partial class ManagementNode
{
    private const ulong RuleDescriptionCode = 0x0000013700000004;
    private const ulong EmptyRuleActionCode = 0x0000013700000005;
    // The filters' codes have one zero fewer than the rule description's and the action's: 0x137_0000006, as the 7.x client registers them.
    private const ulong SqlFilterCode = 0x0000001370000006;
    private const ulong TrueFilterCode = 0x0000001370000007;
    private const ulong FalseFilterCode = 0x0000001370000008;
    private const ulong CorrelationFilterCode = 0x0000001370000009;
    private static readonly MapKey RuleName = new("rule-name");
    private static readonly MapKey RuleDescription = new("rule-description");
    private static readonly MapKey SqlFilterKey = new("sql-filter");
    private static readonly MapKey SqlRuleAction = new("sql-rule-action");
    private static readonly MapKey CorrelationFilterKey = new("correlation-filter");
    private static readonly MapKey Expression = new("expression");
    private static readonly MapKey Properties = new("properties");
    private static readonly MapKey Rules = new("rules");
    private static readonly MapKey Skip = new("skip");
    private static readonly MapKey Top = new("top");
    private static readonly AmqpSymbol EntityAlreadyExists = "com.microsoft:entity-already-exists";

    /// <summary>The correlation filter's map keys and the system property each one matches (as the service names it).</summary>
    private static readonly (MapKey Key, string Field)[] CorrelationKeys =
    [
        (new("correlation-id"), "CorrelationId"), (new("message-id"), "MessageId"), (new("to"), "To"), (new("reply-to"), "ReplyTo"),
        (new("label"), "Label"), (new("session-id"), "SessionId"), (new("reply-to-session-id"), "ReplyToSessionId"), (new("content-type"), "ContentType"),
    ];

    private SubscriptionRules? RulesOf(ServiceBusTestQueue queue)
    {
        var marker = queue.Path.IndexOf("/Subscriptions/", StringComparison.OrdinalIgnoreCase);
        return marker < 0 || _broker.FindTopic(queue.Path[..marker]) is not { } topic
            ? null
            : _broker.Operate(_ => topic.RulesOfLocked(queue));
    }

    private AmqpMessage AddRule(ServiceBusTestQueue queue, AmqpMap? body)
    {
        var name = body?[RuleName] as string ?? throw new ArgumentException("rule-name is missing.", nameof(body));
        var description = body![RuleDescription] as AmqpMap ?? throw new ArgumentException("rule-description is missing.", nameof(body));
        if (description[SqlRuleAction] is AmqpMap)
        {
            return Answer(501, "The test broker does not support SQL rule actions.", null, ServiceBusSymbols.NotImplemented);
        }

        ServiceBusTestRule rule;
        if (description[SqlFilterKey] is AmqpMap sql)
        {
            var expression = sql[Expression] as string ?? throw new ArgumentException("The SQL filter has no expression.", nameof(body));
            rule = ServiceBusTestRule.Sql(name, expression);
        }
        else if (description[CorrelationFilterKey] is AmqpMap correlation)
        {
            var fields = new Dictionary<string, string>(StringComparer.Ordinal);
            foreach (var (key, field) in CorrelationKeys)
            {
                if (correlation[key] is string value)
                {
                    fields[field] = value;
                }
            }

            var properties = new Dictionary<string, object>(StringComparer.Ordinal);
            if (correlation[Properties] is AmqpMap map)
            {
                foreach (var pair in map)
                {
                    properties[pair.Key.Key.ToString()!] = pair.Value;
                }
            }

            rule = ServiceBusTestRule.CorrelationOf(name, fields, properties, nameof(body));
        }
        else
        {
            throw new ArgumentException("The rule has neither a SQL filter nor a correlation filter.", nameof(body));
        }

        var rules = RulesOf(queue);
        if (rules is null)
        {
            return Answer(404, $"'{queue.Path}' is not a subscription.", null, ServiceBusSymbols.EntityNotFound);
        }

        var added = _broker.Operate(now => rules.TryAdd(rule.CreatedOn(now)));
        return added
            ? Answer(200, "OK", null)
            : Answer(409, $"The messaging entity '{queue.Path}/Rules/{name}' already exists.", null, EntityAlreadyExists);
    }

    private AmqpMessage RemoveRule(ServiceBusTestQueue queue, AmqpMap? body)
    {
        var name = body?[RuleName] as string ?? throw new ArgumentException("rule-name is missing.", nameof(body));
        var rules = RulesOf(queue);
        var removed = rules is not null && _broker.Operate(_ => rules.Remove(name));
        return removed
            ? Answer(200, "OK", null)
            : Answer(404, $"The messaging entity '{queue.Path}/Rules/{name}' could not be found.", null, ServiceBusSymbols.EntityNotFound);
    }

    private AmqpMessage EnumerateRules(ServiceBusTestQueue queue, AmqpMap? body)
    {
        var skip = Convert.ToInt32(body?[Skip] ?? 0, CultureInfo.InvariantCulture);
        var top = Convert.ToInt32(body?[Top] ?? int.MaxValue, CultureInfo.InvariantCulture);
        if (RulesOf(queue) is not { } rules)
        {
            return Answer(404, $"'{queue.Path}' is not a subscription.", null, ServiceBusSymbols.EntityNotFound);
        }

        var page = _broker.Operate(_ => rules.All.Skip(skip).Take(top).ToList());
        if (page.Count == 0)
        {
            return Answer(204, "No rules.", null);
        }

        var entries = page.Select(rule => (object)new AmqpMap { [RuleDescription] = Describe(rule) }).ToList();
        return Answer(200, "OK", new AmqpMap { [Rules] = entries });
    }

    /// <summary>A rule as the service describes it (com.microsoft:rule-description:list): filter, action, name, created-at.</summary>
    private static DescribedFields Describe(ServiceBusTestRule rule)
    {
        DescribedFields filter;
        if (rule.SqlExpression is { } expression)
        {
            var compact = expression.Replace(" ", string.Empty, StringComparison.Ordinal);
            filter = compact switch
            {
                "1=1" => new DescribedFields("com.microsoft:true-filter:list", TrueFilterCode),
                "1=0" => new DescribedFields("com.microsoft:false-filter:list", FalseFilterCode),
                _ => new DescribedFields("com.microsoft:sql-filter:list", SqlFilterCode, expression, null),
            };
        }
        else
        {
            var fields = new List<object?>();
            foreach (var (_, field) in CorrelationKeys)
            {
                fields.Add(rule.CorrelationFields.GetValueOrDefault(field));
            }

            var properties = new AmqpMap();
            foreach (var (key, value) in rule.CorrelationProperties)
            {
                properties[new MapKey(key)] = value;
            }

            fields.Add(properties);
            filter = new DescribedFields("com.microsoft:correlation-filter:list", CorrelationFilterCode, [.. fields]);
        }

        return new DescribedFields(
            "com.microsoft:rule-description:list",
            RuleDescriptionCode,
            filter,
            new DescribedFields("com.microsoft:empty-rule-action:list", EmptyRuleActionCode),
            rule.Name,
            rule.CreatedAt?.UtcDateTime);
    }
}
