using Azure.Core;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using PriorityAsync.MessagePump.AzureServiceBus.Hosting;
using PriorityAsync.MessagePump.Hosting;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Hosting;

/// <summary>A hosted pump whose Service Bus source comes from configuration; nothing here connects to a broker.</summary>
public sealed class HostingTests
{
    private const string EmulatorConnectionString = "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";

    [Fact]
    public async Task A_queue_from_configuration_becomes_the_pump_s_source()
    {
        await using var provider = Build(new Dictionary<string, string?>
        {
            ["Orders:ConnectionString"] = EmulatorConnectionString,
            ["Orders:QueueName"] = "orders",
            ["Orders:LockDuration"] = "00:00:45",
        });

        var service = provider.GetRequiredKeyedService<MessagePumpHostedService>("orders");
        var source = provider.GetRequiredKeyedService<IMessageSource>("PriorityAsync.MessagePump.AzureServiceBus:orders");

        service.Pump.Name.Should().Be("orders");
        source.Should().BeOfType<ServiceBusMessageSource>().Which.Entity.Should().Be(ServiceBusEntity.Queue("orders"));
        source.LockDuration.Should().Be(TimeSpan.FromSeconds(45));
    }

    [Fact]
    public async Task A_session_enabled_subscription_with_a_token_credential_becomes_a_multi_session_source()
    {
        await using var provider = Build(
            new Dictionary<string, string?>
            {
                ["Orders:FullyQualifiedNamespace"] = "contoso.servicebus.windows.net",
                ["Orders:TopicName"] = "events",
                ["Orders:SubscriptionName"] = "billing",
                ["Orders:MaxConcurrentSessions"] = "4",
            },
            services => services.AddSingleton<TokenCredential>(new NoCredential()));

        provider.GetRequiredKeyedService<MessagePumpHostedService>("orders");
        var source = provider.GetRequiredKeyedService<IMessageSource>("PriorityAsync.MessagePump.AzureServiceBus:orders");

        var sessions = source.Should().BeOfType<ServiceBusMultiSessionSource>().Subject;
        sessions.Entity.Should().Be(ServiceBusEntity.Subscription("events", "billing"));
        sessions.MaxConcurrentSessions.Should().Be(4);
    }

    [Fact]
    public async Task A_dead_letter_sub_queue_from_configuration_is_received_from_and_refused_with_sessions()
    {
        await using var provider = Build(new Dictionary<string, string?>
        {
            ["Orders:ConnectionString"] = EmulatorConnectionString,
            ["Orders:QueueName"] = "orders",
            ["Orders:SubQueue"] = "DeadLetter",
        });

        provider.GetRequiredKeyedService<MessagePumpHostedService>("orders");
        var source = provider.GetRequiredKeyedService<IMessageSource>("PriorityAsync.MessagePump.AzureServiceBus:orders");

        source.Should().BeOfType<ServiceBusMessageSource>().Which.Receiver.EntityPath.Should().Be("orders/$DeadLetterQueue");
        var settings = new ServiceBusSourceSettings { ConnectionString = EmulatorConnectionString, QueueName = "orders", Source = { SubQueue = Azure.Messaging.ServiceBus.SubQueue.DeadLetter }, MaxConcurrentSessions = 2 };
        settings.Invoking(s => s.Validate()).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("SubQueue");
    }

    [Theory]
    [InlineData(null, null, "orders", "ConnectionString")]
    [InlineData(EmulatorConnectionString, "contoso.servicebus.windows.net", "orders", "ConnectionString")]
    [InlineData("Endpoint=;SharedAccessKeyName=k", null, "orders", "ConnectionString")]
    [InlineData(EmulatorConnectionString, null, null, "QueueName")]
    public async Task Bad_settings_fail_the_host_s_start_naming_the_pump_and_the_setting(string? connectionString, string? fullyQualifiedNamespace, string? queueName, string setting)
    {
        var host = Host.CreateApplicationBuilder();
        host.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Orders:ConnectionString"] = connectionString,
            ["Orders:FullyQualifiedNamespace"] = fullyQualifiedNamespace,
            ["Orders:QueueName"] = queueName,
        });
        host.Services.AddServiceBusMessagePump("orders", host.Configuration.GetSection("Orders")).WithHandler((_, _) => Task.CompletedTask);
        using var app = host.Build();

        var failure = await app.Invoking(a => a.StartAsync()).Should().ThrowAsync<OptionsValidationException>();

        failure.Which.Message.Should().Contain("message pump 'orders'").And.Contain($"({setting})");
    }

    [Fact]
    public async Task A_namespace_without_a_registered_credential_is_a_clear_error()
    {
        await using var provider = Build(new Dictionary<string, string?>
        {
            ["Orders:FullyQualifiedNamespace"] = "contoso.servicebus.windows.net",
            ["Orders:QueueName"] = "orders",
        });

        var act = () => provider.GetRequiredKeyedService<MessagePumpHostedService>("orders");

        act.Should().Throw<InvalidOperationException>().Which.Message.Should().Contain("TokenCredential").And.Contain("'orders'");
    }

    [Fact]
    public void Settings_name_their_entity_or_say_what_is_missing()
    {
        new Action(() => new ServiceBusSourceSettings { TopicName = "t" }.ToEntity()).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("SubscriptionName");
        new Action(() => new ServiceBusSourceSettings { QueueName = "q", TopicName = "t", SubscriptionName = "s" }.ToEntity()).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("QueueName");
        new Action(() => new ServiceBusSourceSettings { ConnectionString = EmulatorConnectionString, QueueName = "q", MaxConcurrentSessions = -1 }.Validate())
            .Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("MaxConcurrentSessions");
        new Action(() => new ServiceBusSourceSettings { ConnectionString = EmulatorConnectionString, QueueName = "q", Source = { LockDuration = TimeSpan.Zero } }.Validate())
            .Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("LockDuration");
    }

    private static ServiceProvider Build(Dictionary<string, string?> settings, Action<IServiceCollection>? more = null)
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(settings).Build();
        var services = new ServiceCollection();
        services.AddLogging();
        more?.Invoke(services);
        services.AddServiceBusMessagePump("orders", configuration.GetSection("Orders")).WithHandler((_, _) => Task.CompletedTask);
        return services.BuildServiceProvider();
    }

    private sealed class NoCredential : TokenCredential
    {
        public override AccessToken GetToken(TokenRequestContext requestContext, CancellationToken cancellationToken) => throw new NotSupportedException();

        public override ValueTask<AccessToken> GetTokenAsync(TokenRequestContext requestContext, CancellationToken cancellationToken) => throw new NotSupportedException();
    }
}
