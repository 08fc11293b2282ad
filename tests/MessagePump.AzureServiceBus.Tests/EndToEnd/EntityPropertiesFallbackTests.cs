using System.Text;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.EndToEnd;

/// <summary>Reading the entity's properties is a convenience: where it cannot be done, the option is used.</summary>
public sealed class EntityPropertiesFallbackTests
{
    [Fact]
    public async Task Without_a_management_endpoint_OpenAsync_falls_back_to_the_option()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(Encoding.UTF8.GetBytes("m"), "m");
        await using var transport = new ServiceBusTransport(broker.ConnectionString, new ServiceBusTransportOptions { ClientOptions = SbHarness.ClientOptions() });

        await using var source = await transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(30) });

        ((IMessageSource)source).LockDuration.Should().Be(TimeSpan.FromSeconds(30));
        var message = (await SourceEndToEndTests.ReceiveAtLeastAsync(source, 1)).Single();
        await message.CompleteAsync();
        queue.CompletionsOf("m").Should().Be(1);
    }
}
