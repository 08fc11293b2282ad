using PriorityAsync.MessagePump.AzureServiceBus.Testing.Rules;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>
/// A subscription rule: a name and a filter (a SQL filter of the subset the broker parses, or a correlation filter).
/// A message published to a topic reaches a subscription when any of its rules matches. SQL rule actions are not supported.
/// </summary>
public sealed class ServiceBusTestRule
{
    /// <summary>The name of the rule every subscription starts with (a true filter), as on the service.</summary>
    public const string DefaultRuleName = "$Default";

    private readonly SqlFilter? _sql;
    private readonly IReadOnlyDictionary<string, string> _correlation;
    private readonly IReadOnlyDictionary<string, object> _properties;

    private ServiceBusTestRule(string name, SqlFilter? sql, IReadOnlyDictionary<string, string> correlation, IReadOnlyDictionary<string, object> properties, DateTimeOffset? createdAt = null)
    {
        Name = name;
        _sql = sql;
        _correlation = correlation;
        _properties = properties;
        CreatedAt = createdAt;
    }

    /// <summary>The rule's name.</summary>
    public string Name { get; }

    /// <summary>The SQL filter expression, or null for a correlation filter.</summary>
    public string? SqlExpression => _sql?.Expression;

    internal DateTimeOffset? CreatedAt { get; }

    /// <summary>The system properties (as the service names them: <c>CorrelationId</c>, <c>Label</c> …) a correlation filter requires.</summary>
    internal IReadOnlyDictionary<string, string> CorrelationFields => _correlation;

    /// <summary>The application properties a correlation filter requires.</summary>
    internal IReadOnlyDictionary<string, object> CorrelationProperties => _properties;

    /// <summary>A rule with a SQL filter.</summary>
    /// <param name="name">The rule name.</param>
    /// <param name="expression">The filter, e.g. <c>sys.Label = 'red' AND priority &gt; 2</c> (the subset the broker's README lists).</param>
    /// <returns>The rule.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, or <paramref name="expression"/> is not SQL the broker parses.</exception>
    public static ServiceBusTestRule Sql(string name, string expression)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ArgumentException.ThrowIfNullOrWhiteSpace(expression);
        return new ServiceBusTestRule(name, ParseSql(expression, nameof(expression)), new Dictionary<string, string>(StringComparer.Ordinal), new Dictionary<string, object>(StringComparer.Ordinal));
    }

    /// <summary>A rule with a correlation filter: a message matches when every given value equals the message's.</summary>
    /// <param name="name">The rule name.</param>
    /// <param name="correlationId">The correlation id to match, or null.</param>
    /// <param name="subject">The subject (label) to match, or null.</param>
    /// <param name="applicationProperties">Application properties to match, or null.</param>
    /// <returns>The rule.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, or nothing is given to match.</exception>
    public static ServiceBusTestRule Correlation(string name, string? correlationId = null, string? subject = null, IReadOnlyDictionary<string, object>? applicationProperties = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        var fields = new Dictionary<string, string>(StringComparer.Ordinal);
        if (correlationId is not null)
        {
            fields["CorrelationId"] = correlationId;
        }

        if (subject is not null)
        {
            fields["Label"] = subject;
        }

        return CorrelationOf(name, fields, applicationProperties ?? new Dictionary<string, object>(StringComparer.Ordinal), nameof(applicationProperties));
    }

    /// <inheritdoc/>
    public override string ToString() => _sql is not null ? $"{Name}: {_sql.Expression}" : $"{Name}: correlation";

    internal static ServiceBusTestRule Default(DateTimeOffset createdAt) => new(DefaultRuleName, SqlFilter.Parse("1=1"), new Dictionary<string, string>(StringComparer.Ordinal), new Dictionary<string, object>(StringComparer.Ordinal), createdAt);

    internal static SqlFilter ParseSql(string expression, string paramName)
    {
        try
        {
            return SqlFilter.Parse(expression);
        }
        catch (FormatException exception)
        {
            throw new ArgumentException($"The SQL filter '{expression}' is not valid for the test broker: {exception.Message}", paramName, exception);
        }
    }

    internal static ServiceBusTestRule CorrelationOf(string name, IReadOnlyDictionary<string, string> fields, IReadOnlyDictionary<string, object> properties, string paramName)
    {
        if (fields.Count == 0 && properties.Count == 0)
        {
            throw new ArgumentException("A correlation filter needs at least one property to match.", paramName);
        }

        return new ServiceBusTestRule(name, null, fields, properties);
    }

    internal ServiceBusTestRule CreatedOn(DateTimeOffset createdAt) => new(Name, _sql, _correlation, _properties, createdAt);

    internal bool Matches(FilterMessage message)
    {
        if (_sql is not null)
        {
            return _sql.Matches(message);
        }

        foreach (var (field, expected) in _correlation)
        {
            if (!string.Equals(message.SystemProperty(field) as string, expected, StringComparison.Ordinal))
            {
                return false;
            }
        }

        foreach (var (key, expected) in _properties)
        {
            if (!message.HasUserProperty(key, expected))
            {
                return false;
            }
        }

        return true;
    }
}
