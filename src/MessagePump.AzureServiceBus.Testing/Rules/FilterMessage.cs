namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Rules;

/// <summary>What subscription rules judge of a message: its system properties (as the service names them) and its application properties.</summary>
internal sealed class FilterMessage
{
    private static readonly string[] SystemNames =
        ["MessageId", "CorrelationId", "To", "ReplyTo", "Label", "SessionId", "ReplyToSessionId", "ContentType"];

    private readonly Dictionary<string, object?> _system = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, object?> _user = new(StringComparer.Ordinal);

    private FilterMessage()
    {
    }

    /// <summary>Whether <paramref name="name"/> (without <c>sys.</c>) is a system property a filter can name.</summary>
    public static bool IsSystemProperty(string name) => Array.Exists(SystemNames, n => string.Equals(n, name, StringComparison.OrdinalIgnoreCase));

    public static FilterMessage From(byte[] encoded)
    {
        using var message = AmqpCodec.Decode(encoded);
        var view = new FilterMessage();
        var properties = message.Properties;
        view._system["MessageId"] = properties?.MessageId?.ToString();
        view._system["CorrelationId"] = properties?.CorrelationId?.ToString();
        view._system["To"] = properties?.To?.ToString();
        view._system["ReplyTo"] = properties?.ReplyTo?.ToString();
        view._system["Label"] = properties?.Subject;
        view._system["SessionId"] = properties?.GroupId;
        view._system["ReplyToSessionId"] = properties?.ReplyToGroupId;
        view._system["ContentType"] = properties?.ContentType.Value;
        if (message.ApplicationProperties is { } applicationProperties)
        {
            foreach (var pair in applicationProperties.Map)
            {
                view._user[pair.Key.Key.ToString()!] = pair.Value;
            }
        }

        return view;
    }

    public object? SystemProperty(string name) => _system.GetValueOrDefault(name);

    /// <summary>
    /// An application property as a SQL filter names it: as on Service Bus, the name matches without regard to case
    /// (an exact match first, when the message has names differing only in case).
    /// </summary>
    public object? UserProperty(string name)
    {
        if (_user.TryGetValue(name, out var value))
        {
            return value;
        }

        foreach (var (key, candidate) in _user)
        {
            if (string.Equals(key, name, StringComparison.OrdinalIgnoreCase))
            {
                return candidate;
            }
        }

        return null;
    }

    /// <summary>Whether the message has the application property with a value equal to <paramref name="expected"/> (numbers compared by value).</summary>
    public bool HasUserProperty(string name, object? expected)
    {
        if (!_user.TryGetValue(name, out var actual))
        {
            return false;
        }

        return Equals(actual, expected)
            || (actual is IConvertible && expected is IConvertible && actual is not string && expected is not string && actual is not bool && expected is not bool
                && NumericEquals(actual, expected));
    }

    private static bool NumericEquals(object actual, object expected)
    {
        try
        {
            return Convert.ToDecimal(actual, System.Globalization.CultureInfo.InvariantCulture) == Convert.ToDecimal(expected, System.Globalization.CultureInfo.InvariantCulture);
        }
        catch (Exception exception) when (exception is InvalidCastException or FormatException or OverflowException)
        {
            return false;
        }
    }
}
