using System.Text;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.EndToEnd;

/// <summary>A generic host whose pump's Service Bus source comes from configuration, against the test broker.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class HostingEndToEndTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(2)]
    public async Task A_hosted_pump_from_configuration_consumes_the_entity_and_its_stop_leaves_nothing_locked(int maxConcurrentSessions)
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30), RequiresSession = maxConcurrentSessions > 0 });
        for (var i = 0; i < 6; i++)
        {
            queue.Send(Encoding.UTF8.GetBytes($"m{i}"), $"m{i}", sessionId: maxConcurrentSessions > 0 ? $"s{i % 2}" : null);
        }

        var builder = Host.CreateApplicationBuilder();
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Orders:ServiceBus:ConnectionString"] = broker.ConnectionString,
            ["Orders:ServiceBus:QueueName"] = "orders",
            ["Orders:ServiceBus:LockDuration"] = "00:00:30",
            ["Orders:ServiceBus:MaxWaitTime"] = "00:00:00.300",
            ["Orders:ServiceBus:MaxConcurrentSessions"] = maxConcurrentSessions.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["Orders:Pump:EmptyReceiveDelay"] = "00:00:00.100",
            ["Orders:Pump:ShutdownTimeout"] = "00:00:05",
        });
        var handled = 0;
        builder.Services
            .AddServiceBusMessagePump("orders", builder.Configuration.GetSection("Orders:ServiceBus"))
            .BindConfiguration("Orders:Pump")
            .WithHandler((_, _) =>
            {
                Interlocked.Increment(ref handled);
                return Task.CompletedTask;
            });
        using var host = builder.Build();

        await host.StartAsync();
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 6), SbHarness.HangBound, "six completions");
        await host.StopAsync();

        handled.Should().Be(6);
        queue.LockedCount.Should().Be(0);
        queue.ActiveCount.Should().Be(0);
    }
}
