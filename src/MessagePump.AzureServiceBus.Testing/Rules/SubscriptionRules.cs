namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Rules;

/// <summary>The rules of one subscription, in the order they were added; a message passes when any rule matches. Used under the broker's lock.</summary>
internal sealed class SubscriptionRules
{
    private readonly List<ServiceBusTestRule> _rules = [];

    public IReadOnlyList<ServiceBusTestRule> All => _rules;

    /// <summary>Adds a rule; false when a rule with that name exists (names compare case-insensitively, as on the service).</summary>
    public bool TryAdd(ServiceBusTestRule rule)
    {
        if (_rules.Exists(r => string.Equals(r.Name, rule.Name, StringComparison.OrdinalIgnoreCase)))
        {
            return false;
        }

        _rules.Add(rule);
        return true;
    }

    public bool Remove(string name) => _rules.RemoveAll(r => string.Equals(r.Name, name, StringComparison.OrdinalIgnoreCase)) > 0;

    public bool Matches(FilterMessage message) => _rules.Exists(r => r.Matches(message));
}
