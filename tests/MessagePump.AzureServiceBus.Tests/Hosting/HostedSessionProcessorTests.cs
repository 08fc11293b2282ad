using System.Collections.Concurrent;
using System.Text;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Hosting;

/// <summary><c>AddServiceBusPumpSessionProcessor</c>: a session processor run by the generic host, its options bound from appsettings.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class HostedSessionProcessorTests
{
    [Fact]
    public async Task The_host_runs_a_session_processor_whose_options_are_bound_from_configuration_and_the_stop_closes_its_sessions()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30), RequiresSession = true });
        foreach (var session in new[] { "north", "south", "west" })
        {
            for (var i = 0; i < 2; i++)
            {
                queue.Send(Encoding.UTF8.GetBytes($"{session}{i}"), $"{session}{i}", sessionId: session);
            }
        }

        var builder = Host.CreateApplicationBuilder();
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>(StringComparer.Ordinal)
        {
            ["Orders:MaxConcurrentSessions"] = "2",
            ["Orders:SessionIdleTimeout"] = "00:00:30",
            ["Orders:SessionIds:0"] = "north",
            ["Orders:SessionIds:1"] = "south",
        });
        var handled = new ConcurrentQueue<string>();
        var closed = new ConcurrentQueue<string>();
        var errors = new ConcurrentQueue<string>();
        ServiceBusPumpSessionProcessorOptions? bound = null;
        builder.Services.AddServiceBusPumpSessionProcessor(
            provider =>
            {
                bound = provider.GetRequiredService<IConfiguration>().GetSection("Orders").Get<ServiceBusPumpSessionProcessorOptions>();
                return new ServiceBusPumpSessionProcessor(sb.Transport, "orders", bound);
            },
            (_, processor) =>
            {
                processor.ProcessMessageAsync += args =>
                {
                    handled.Enqueue(args.Message.MessageId);
                    return Task.CompletedTask;
                };
                processor.SessionClosingAsync += args =>
                {
                    closed.Enqueue(args.SessionId);
                    return Task.CompletedTask;
                };
                processor.ProcessErrorAsync += args =>
                {
                    errors.Enqueue($"{args.ErrorSource}: {args.Exception.GetType().Name} {args.Exception.Message}");
                    return Task.CompletedTask;
                };
            });
        using var host = builder.Build();

        await host.StartAsync();
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 4), SbHarness.HangBound, "north's and south's completions", TimeSpan.FromMilliseconds(20));
        closed.Should().BeEmpty($"both sessions are held: their idle timeout (30 s, from configuration) has not passed; errors: [{string.Join("; ", errors)}]");
        await host.StopAsync();

        bound!.MaxConcurrentSessions.Should().Be(2);
        bound.SessionIds.Should().Equal("north", "south");
        handled.Should().BeEquivalentTo(["north0", "north1", "south0", "south1"]);
        closed.Should().BeEquivalentTo(["north", "south"], "the host's stop closes the held sessions");
        queue.LockedCount.Should().Be(0);
        queue.CompletionsOf("west0").Should().Be(0);
    }

    [Fact]
    public void The_registration_refuses_missing_delegates()
    {
        var services = new ServiceCollection();

        services.Invoking(s => s.AddServiceBusPumpSessionProcessor(null!, (_, _) => { })).Should().Throw<ArgumentNullException>().WithParameterName("create");
        services.Invoking(s => s.AddServiceBusPumpSessionProcessor(_ => null!, null!)).Should().Throw<ArgumentNullException>().WithParameterName("configure");
    }
}
