using System.Collections.Concurrent;
using System.Text;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Processor;

/// <summary>The test broker with a queue "orders", and the errors a <see cref="ServiceBusPumpProcessor"/> reported.</summary>
internal sealed class ProcessorHarness : IAsyncDisposable
{
    private ProcessorHarness(SbHarness sb, ServiceBusTestQueue queue)
    {
        Sb = sb;
        Queue = queue;
    }

    public SbHarness Sb { get; }

    public ServiceBusTestQueue Queue { get; }

    public ConcurrentQueue<ProcessErrorEventArgs> Errors { get; } = new();

    public static async Task<ProcessorHarness> StartAsync(int messages, TimeSpan lockDuration)
    {
        var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = lockDuration, MaxDeliveryCount = 10 });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(Encoding.UTF8.GetBytes($"m{i}"), $"m{i}");
        }

        return new ProcessorHarness(sb, queue);
    }

    /// <summary>A processor on the queue whose error handler records what it is told.</summary>
    public ServiceBusPumpProcessor Create(Func<ServiceBusPumpMessageEventArgs, Task> handler, ServiceBusPumpProcessorOptions? options = null)
    {
        var processor = new ServiceBusPumpProcessor(Sb.Transport, "orders", options ?? new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 4 });
        processor.ProcessMessageAsync += handler;
        processor.ProcessErrorAsync += args =>
        {
            Errors.Enqueue(args);
            return Task.CompletedTask;
        };
        return processor;
    }

    public static Task UntilAsync(Func<bool> condition, string what) =>
        Bounded.UntilAsync(() => Task.FromResult(condition()), SbHarness.HangBound, what, TimeSpan.FromMilliseconds(20));

    public ValueTask DisposeAsync() => Sb.DisposeAsync();
}
