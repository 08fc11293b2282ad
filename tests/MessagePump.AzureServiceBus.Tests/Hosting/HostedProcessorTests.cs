using System.Collections.Concurrent;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Hosting;

/// <summary>
/// <c>AddServiceBusPumpProcessor</c>: a processor-shaped consumer run by the generic host, against the test broker (the
/// real SDK client). Real clock: the tests wait for what they count, never for a time budget.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class HostedProcessorTests
{
    [Fact]
    public async Task The_host_starts_the_processor_its_handlers_resolve_services_and_the_stop_leaves_nothing_locked()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        for (var i = 0; i < 5; i++)
        {
            queue.Send(Encoding.UTF8.GetBytes($"order {i}"), $"m{i}");
        }

        var builder = Host.CreateApplicationBuilder();
        builder.Services.AddSingleton<Orders>();
        builder.Services.AddServiceBusPumpProcessor(
            _ => new ServiceBusPumpProcessor(sb.Transport, "orders", new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 2 }),
            (provider, processor) =>
            {
                var orders = provider.GetRequiredService<Orders>();
                processor.ProcessMessageAsync += args =>
                {
                    orders.Handled.Add(args.Message.Body.ToString());
                    return Task.CompletedTask;
                };
                processor.ProcessErrorAsync += args =>
                {
                    orders.Errors.Add(args.Exception);
                    return Task.CompletedTask;
                };
            });
        using var host = builder.Build();

        await host.StartAsync();
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 5), SbHarness.HangBound, "five completions");
        await host.StopAsync();

        var handled = host.Services.GetRequiredService<Orders>();
        handled.Handled.Should().BeEquivalentTo(Enumerable.Range(0, 5).Select(i => $"order {i}"));
        handled.Errors.Should().BeEmpty();
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_host_stop_whose_token_ends_cancels_the_running_handler_and_abandons_its_message()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send("slow"u8.ToArray(), "slow");
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var canceled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        var builder = Host.CreateApplicationBuilder();
        builder.Services.AddServiceBusPumpProcessor(
            _ => new ServiceBusPumpProcessor(sb.Transport, "orders", new ServiceBusPumpProcessorOptions { ShutdownTimeout = Timeout.InfiniteTimeSpan }),
            (_, processor) =>
            {
                processor.ProcessMessageAsync += async args =>
                {
                    started.TrySetResult();
                    try
                    {
                        await Task.Delay(Timeout.InfiniteTimeSpan, args.CancellationToken);
                    }
                    catch (OperationCanceledException)
                    {
                        canceled.TrySetResult();
                        throw;
                    }
                };
                processor.ProcessErrorAsync += _ => Task.CompletedTask;
            });
        using var host = builder.Build();
        await host.StartAsync();
        await started.Task.WaitAsync(SbHarness.HangBound);

        // The host's shutdown timeout has run out: its stop token is already canceled, and the processor's own
        // (infinite) shutdown timeout does not keep the host waiting.
        using var hostTimeout = new CancellationTokenSource();
        await hostTimeout.CancelAsync();
        await host.StopAsync(hostTimeout.Token).WaitAsync(SbHarness.HangBound);

        await canceled.Task.WaitAsync(SbHarness.HangBound);
        queue.LockedCount.Should().Be(0, "the running handler's message was abandoned, not left locked");
        queue.CompletedCount.Should().Be(0);
    }

    [Fact]
    public void Bad_arguments_are_named()
    {
        var services = new ServiceCollection();

        services.Invoking(s => s.AddServiceBusPumpProcessor(null!, (_, _) => { })).Should().Throw<ArgumentNullException>().WithParameterName("create");
        services.Invoking(s => s.AddServiceBusPumpProcessor(_ => null!, null!)).Should().Throw<ArgumentNullException>().WithParameterName("configure");
        FluentActions.Invoking(() => ((IServiceCollection)null!).AddServiceBusPumpProcessor(_ => null!, (_, _) => { })).Should().Throw<ArgumentNullException>().WithParameterName("services");
    }

    [Fact]
    public async Task A_create_delegate_that_returns_null_fails_the_host_s_start_saying_so()
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Services.AddServiceBusPumpProcessor(_ => null!, (_, _) => { });
        using var host = builder.Build();

        var failure = await host.Invoking(h => h.StartAsync()).Should().ThrowAsync<InvalidOperationException>();

        failure.Which.Message.Should().Contain("create delegate returned null");
    }

    private sealed class Orders
    {
        public ConcurrentBag<string> Handled { get; } = [];

        public ConcurrentBag<Exception> Errors { get; } = [];
    }
}
