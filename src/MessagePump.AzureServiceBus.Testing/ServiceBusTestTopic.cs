using PriorityAsync.MessagePump.AzureServiceBus.Testing.Rules;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>A topic of a <see cref="ServiceBusTestBroker"/>: a message sent to it is copied to every subscription whose rules match it.</summary>
public sealed class ServiceBusTestTopic
{
    private readonly ServiceBusTestBroker _broker;
    private readonly List<ServiceBusTestQueue> _subscriptions = [];
    private readonly Dictionary<ServiceBusTestQueue, SubscriptionRules> _rules = [];

    internal ServiceBusTestTopic(ServiceBusTestBroker broker, string name)
    {
        _broker = broker;
        Name = name;
    }

    /// <summary>The topic's name (the path senders use).</summary>
    public string Name { get; }

    /// <summary>The subscriptions created so far.</summary>
    public IReadOnlyList<ServiceBusTestQueue> Subscriptions => _broker.Operate(_ => _subscriptions.ToArray());

    /// <summary>Creates a subscription; receivers read it at <c>{topic}/Subscriptions/{name}</c>.</summary>
    /// <param name="name">The subscription name.</param>
    /// <param name="options">Lock duration, max delivery count, sessions and time-to-live; defaults when null.</param>
    /// <param name="rules">The subscription's rules (a message passes when any matches); null for the default rule
    /// (<see cref="ServiceBusTestRule.DefaultRuleName"/>, every message), empty for none (no message).</param>
    /// <returns>The subscription, a queue that receives a copy of every message sent to the topic from now on that its rules pass.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or not a valid entity name, the subscription exists, or two rules share a name.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public ServiceBusTestQueue CreateSubscription(string name, ServiceBusTestEntityOptions? options = null, IEnumerable<ServiceBusTestRule>? rules = null)
    {
        ServiceBusTestBroker.ValidateEntityName(name, nameof(name));
        var ruleList = rules?.ToList();
        if (ruleList is not null && ruleList.GroupBy(r => r.Name, StringComparer.OrdinalIgnoreCase).FirstOrDefault(g => g.Count() > 1) is { } duplicate)
        {
            throw new ArgumentException($"Two rules are named '{duplicate.Key}'.", nameof(rules));
        }

        var subscription = _broker.AddQueue(ServiceBusTestBroker.SubscriptionPath(Name, name), options, nameof(name));
        _broker.Operate(now =>
        {
            _subscriptions.Add(subscription);
            var set = new SubscriptionRules();
            foreach (var rule in ruleList ?? [ServiceBusTestRule.Default(now)])
            {
                set.TryAdd(rule.CreatedAt is null ? rule.CreatedOn(now) : rule);
            }

            _rules.Add(subscription, set);
            return 0;
        });
        return subscription;
    }

    /// <summary>Enqueues a message without AMQP to every subscription whose rules pass it.</summary>
    /// <param name="body">The message body.</param>
    /// <param name="messageId">The message id; a new one when null.</param>
    /// <param name="sessionId">The session id (needed by subscriptions that require sessions).</param>
    /// <param name="applicationProperties">Application properties.</param>
    /// <returns>The message id.</returns>
    /// <exception cref="ArgumentException">An argument is empty, or a session subscription gets no session id.</exception>
    public string Send(ReadOnlyMemory<byte> body, string? messageId = null, string? sessionId = null, IReadOnlyDictionary<string, object>? applicationProperties = null)
    {
        if (messageId is { Length: 0 })
        {
            throw new ArgumentException("The message id must not be empty.", nameof(messageId));
        }

        if (sessionId is { Length: 0 })
        {
            throw new ArgumentException("The session id must not be empty.", nameof(sessionId));
        }

        var id = messageId ?? Guid.NewGuid().ToString("N");
        var encoded = AmqpCodec.Encode(body, id, sessionId, applicationProperties);
        var error = _broker.Operate(now => PublishLocked(encoded, id, sessionId, now));
        if (error is not null)
        {
            throw new ArgumentException(error, nameof(sessionId));
        }

        return id;
    }

    /// <inheritdoc/>
    public override string ToString() => Name;

    /// <summary>Why a message without a session id cannot be published (a subscription requires sessions), or null.</summary>
    internal string? SessionErrorLocked() =>
        _subscriptions.Find(s => s.RequiresSession) is { } sessionful
            ? $"The subscription '{sessionful.Path}' requires sessions: the message needs a session id."
            : null;

    /// <summary>Copies a message to every subscription whose rules pass it; returns an error text (and enqueues nothing) when a session subscription gets no session id.</summary>
    internal string? PublishLocked(byte[] encoded, string messageId, string? sessionId, DateTimeOffset now, DateTimeOffset? scheduledEnqueueTime = null)
    {
        if (sessionId is null && SessionErrorLocked() is { } error)
        {
            return error;
        }

        var filterView = FilterMessage.From(encoded);
        foreach (var subscription in _subscriptions)
        {
            if (!_rules[subscription].Matches(filterView))
            {
                continue;
            }

            subscription.EnqueueLocked(encoded, messageId, sessionId, now, deadLetterSource: null, deliveryCount: 0, scheduledEnqueueTime);
        }

        return null;
    }

    /// <summary>The rules of one of this topic's subscriptions, or null when the queue is not one of them.</summary>
    internal SubscriptionRules? RulesOfLocked(ServiceBusTestQueue subscription) => _rules.GetValueOrDefault(subscription);
}
