using System.Text.RegularExpressions;

namespace PriorityAsync.MessagePump.PostgreSql.Internal;

/// <summary>Validates queue names: lower-case letters, digits and underscores, starting with a letter or underscore, 1 to 48 characters.</summary>
internal static partial class QueueName
{
    public const string Rule = "^[a-z_][a-z0-9_]{0,47}$";

    public static void Validate(string name, string paramName)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name, paramName);
        if (!Pattern().IsMatch(name))
        {
            throw new ArgumentException(
                $"Queue name '{name}' is not valid: use 1 to 48 lower-case letters, digits and underscores, starting with a letter or underscore ({Rule}).",
                paramName);
        }
    }

    [GeneratedRegex(Rule, RegexOptions.CultureInvariant, matchTimeoutMilliseconds: 1000)]
    private static partial Regex Pattern();
}
