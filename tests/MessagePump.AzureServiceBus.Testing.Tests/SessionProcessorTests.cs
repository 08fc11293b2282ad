using System.Collections.Concurrent;
using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

public sealed class SessionProcessorTests
{
    [Fact]
    public async Task A_session_processor_handles_each_session_in_order_and_completes_every_message_once()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("session-work", new ServiceBusTestEntityOptions { RequiresSession = true });
        var expected = new[] { ("a", "a1"), ("b", "b1"), ("a", "a2"), ("b", "b2"), ("a", "a3") };
        foreach (var (session, id) in expected)
        {
            queue.Send(System.Text.Encoding.UTF8.GetBytes(id), messageId: id, sessionId: session);
        }

        await using var processor = harness.Client.CreateSessionProcessor("session-work", new ServiceBusSessionProcessorOptions
        {
            MaxConcurrentSessions = 2,
            AutoCompleteMessages = true,
            SessionIdleTimeout = TimeSpan.FromSeconds(1),
        });
        var handled = new ConcurrentQueue<(string Session, string Id)>();
        var errors = new ConcurrentQueue<Exception>();
        processor.ProcessMessageAsync += args =>
        {
            handled.Enqueue((args.SessionId, args.Message.MessageId));
            return Task.CompletedTask;
        };
        processor.ProcessErrorAsync += args =>
        {
            errors.Enqueue(args.Exception);
            return Task.CompletedTask;
        };

        await processor.StartProcessingAsync();
        using var bound = new CancellationTokenSource(BrokerHarness.HangBound);
        while (queue.CompletedCount < expected.Length)
        {
            await Task.Delay(20, bound.Token);
        }

        await processor.StopProcessingAsync();

        handled.Where(h => h.Session == "a").Select(h => h.Id).Should().Equal("a1", "a2", "a3");
        handled.Where(h => h.Session == "b").Select(h => h.Id).Should().Equal("b1", "b2");
        foreach (var (_, id) in expected)
        {
            queue.CompletionsOf(id).Should().Be(1);
        }

        errors.Should().BeEmpty();
    }
}
