using Azure.Core;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Transport;

/// <summary>Bad input gets an exception that names the argument and the rule.</summary>
public sealed class OptionsAndArgumentTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(-5)]
    public void LockDuration_of_zero_or_less_is_rejected(int seconds)
    {
        var options = new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(seconds) };

        var act = options.Validate;

        act.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be(nameof(ServiceBusSourceOptions.LockDuration));
    }

    [Fact]
    public void Negative_prefetch_zero_wait_and_negative_tolerance_are_rejected()
    {
        new Action(new ServiceBusSourceOptions { PrefetchCount = -1 }.Validate).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("PrefetchCount");
        new Action(new ServiceBusSourceOptions { MaxWaitTime = TimeSpan.Zero }.Validate).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("MaxWaitTime");
        new Action(new ServiceBusSourceOptions { LockDurationTolerance = TimeSpan.FromSeconds(-1) }.Validate).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("LockDurationTolerance");
    }

    [Fact]
    public void A_time_provider_is_a_public_option_and_one_that_does_not_tell_utc_is_rejected()
    {
        var clock = new FakeTimeProviderAtOffset(TimeSpan.Zero);
        var options = new ServiceBusSourceOptions { TimeProvider = clock };
        options.Validate();
        options.Clone().TimeProvider.Should().BeSameAs(clock, "the copy a source takes keeps the clock");

        new Action(new ServiceBusSourceOptions { TimeProvider = new FakeTimeProviderAtOffset(TimeSpan.FromHours(1)) }.Validate)
            .Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("TimeProvider");
    }

    [Fact]
    public async Task An_undefined_sub_queue_is_rejected_and_the_session_sources_refuse_a_sub_queue_naming_the_options()
    {
        new Action(new ServiceBusSourceOptions { SubQueue = (SubQueue)7 }.Validate).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("SubQueue");
        await using var transport = new ServiceBusTransport("Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true;", new ServiceBusTransportOptions { ReadEntityProperties = false });
        var deadLetters = new ServiceBusSourceOptions { SubQueue = SubQueue.DeadLetter };

        (await transport.Invoking(t => t.OpenSessionsAsync(ServiceBusEntity.Queue("orders"), 2, deadLetters)).Should().ThrowAsync<ArgumentException>()).Which.ParamName.Should().Be("options");
        (await transport.Invoking(t => t.AcceptNextSessionAsync(ServiceBusEntity.Queue("orders"), deadLetters)).Should().ThrowAsync<ArgumentException>()).Which.ParamName.Should().Be("options");
    }

    [Fact]
    public void A_source_validates_its_options_when_created()
    {
        var act = () => new ServiceBusMessageSource(new FakeReceiver(), new ServiceBusSourceOptions { LockDuration = TimeSpan.Zero });

        act.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("LockDuration");
    }

    [Theory]
    [InlineData("")]
    [InlineData("   ")]
    public void An_empty_connection_string_is_rejected(string connectionString)
    {
        var act = () => new ServiceBusTransport(connectionString);

        act.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("connectionString");
    }

    [Theory]
    [InlineData("not a connection string")]
    [InlineData("SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=abc")]
    [InlineData("Endpoint=;SharedAccessKeyName=k;SharedAccessKey=v")]
    public void A_malformed_connection_string_is_rejected_naming_the_argument(string connectionString)
    {
        var act = () => new ServiceBusTransport(connectionString);

        act.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("connectionString");
    }

    [Theory]
    [InlineData("")]
    [InlineData("sb://ns.servicebus.windows.net/")]
    public void A_namespace_that_is_not_a_host_name_is_rejected(string fullyQualifiedNamespace)
    {
        var act = () => new ServiceBusTransport(fullyQualifiedNamespace, new NoCredential());

        act.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("fullyQualifiedNamespace");
    }

    [Fact]
    public void A_null_credential_is_rejected()
    {
        var act = () => new ServiceBusTransport("ns.servicebus.windows.net", (TokenCredential)null!);

        act.Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("credential");
    }

    [Fact]
    public void A_receiver_in_ReceiveAndDelete_mode_is_rejected_naming_the_entity()
    {
        var act = () => new ServiceBusMessageSource(new FakeReceiver("orders", ServiceBusReceiveMode.ReceiveAndDelete));

        act.Should().Throw<ArgumentException>()
            .Where(e => e.ParamName == "receiver" && e.Message.Contains("queue 'orders'", StringComparison.Ordinal) && e.Message.Contains("PeekLock", StringComparison.Ordinal));
    }

    [Fact]
    public void A_closed_receiver_is_rejected()
    {
        var act = () => new ServiceBusMessageSource(new FakeReceiver { Closed = true });

        act.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("receiver");
    }

    [Fact]
    public void A_session_receiver_is_rejected_by_the_non_session_source()
    {
        var act = () => new ServiceBusMessageSource(new FakeSessionReceiver("s1", DateTimeOffset.UnixEpoch));

        act.Should().Throw<ArgumentException>().Where(e => e.ParamName == "receiver" && e.Message.Contains("ServiceBusSessionMessageSource", StringComparison.Ordinal));
    }

    [Fact]
    public void A_subscription_path_is_read_as_topic_and_subscription()
    {
        var source = new ServiceBusMessageSource(new FakeReceiver("events/Subscriptions/audit"));

        source.Entity.Should().Be(ServiceBusEntity.Subscription("events", "audit"));
        ((IMessageSource)source).DestinationName.Should().Be("events/Subscriptions/audit");
        ((IMessageSource)source).MessagingSystem.Should().Be("servicebus");
    }

    [Fact]
    public void Entity_names_must_not_be_empty()
    {
        new Action(() => ServiceBusEntity.Queue(" ")).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("queueName");
        new Action(() => ServiceBusEntity.Subscription("t", "")).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("subscriptionName");
    }

    [Fact]
    public async Task Accepting_a_session_with_an_empty_id_is_rejected()
    {
        await using var transport = new ServiceBusTransport("Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true", new ServiceBusTransportOptions { ReadEntityProperties = false });

        var act = () => transport.AcceptSessionAsync(ServiceBusEntity.Queue("q"), " ");

        (await act.Should().ThrowAsync<ArgumentException>()).Which.ParamName.Should().Be("sessionId");
    }

    private sealed class NoCredential : TokenCredential
    {
        public override AccessToken GetToken(TokenRequestContext requestContext, CancellationToken cancellationToken) => throw new NotSupportedException();

        public override ValueTask<AccessToken> GetTokenAsync(TokenRequestContext requestContext, CancellationToken cancellationToken) => throw new NotSupportedException();
    }

    /// <summary>A clock whose GetUtcNow carries <paramref name="offset"/> (a broken clock when it is not zero).</summary>
    private sealed class FakeTimeProviderAtOffset(TimeSpan offset) : TimeProvider
    {
        public override DateTimeOffset GetUtcNow() => new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero).ToOffset(offset);
    }
}
