using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Text;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Processor;

/// <summary><see cref="ServiceBusPumpProcessor"/>'s start, stop and bad input, with the real SDK client against the test broker.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class ProcessorLifecycleTests
{
    [Fact]
    public async Task Start_requires_both_handlers_naming_the_missing_one()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 0, TimeSpan.FromSeconds(5));
        await using var processor = new ServiceBusPumpProcessor(h.Sb.Transport, "orders");

        (await processor.Invoking(p => p.StartProcessingAsync()).Should().ThrowAsync<InvalidOperationException>())
            .Which.Message.Should().Contain("ProcessMessageAsync");
        processor.ProcessMessageAsync += _ => Task.CompletedTask;
        (await processor.Invoking(p => p.StartProcessingAsync()).Should().ThrowAsync<InvalidOperationException>())
            .Which.Message.Should().Contain("ProcessErrorAsync");
        processor.IsProcessing.Should().BeFalse();
    }

    [Fact]
    public async Task One_handler_per_event_and_none_changed_while_processing()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 0, TimeSpan.FromSeconds(5));
        Func<ServiceBusPumpMessageEventArgs, Task> handler = _ => Task.CompletedTask;
        await using var processor = h.Create(handler);

        processor.Invoking(p => p.ProcessMessageAsync += _ => Task.CompletedTask).Should().Throw<NotSupportedException>();
        processor.Invoking(p => p.ProcessMessageAsync += null!).Should().Throw<ArgumentNullException>();
        await processor.StartProcessingAsync();
        processor.Invoking(p => p.ProcessMessageAsync -= handler).Should().Throw<InvalidOperationException>().Which.Message.Should().Contain("processing");
        (await processor.Invoking(p => p.StartProcessingAsync()).Should().ThrowAsync<InvalidOperationException>()).Which.Message.Should().Contain("already processing");
        await processor.StopProcessingAsync();
        processor.ProcessMessageAsync -= handler; // allowed once stopped
    }

    [Fact]
    public async Task Stop_cancels_handlers_past_the_shutdown_timeout_abandons_their_messages_leaves_nothing_locked_and_a_restart_completes_them()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 3, TimeSpan.FromSeconds(30));
        var stopping = true;
        await using var processor = h.Create(
            async args =>
            {
                if (Volatile.Read(ref stopping))
                {
                    await Task.Delay(Timeout.InfiniteTimeSpan, args.CancellationToken); // held until the stop cancels it
                }
            },
            new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 3, ShutdownTimeout = TimeSpan.FromMilliseconds(200) });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.LockedCount == 3, "three messages in the handlers");
        await processor.StopProcessingAsync();

        processor.IsProcessing.Should().BeFalse();
        h.Queue.LockedCount.Should().Be(0, "a stopped processor leaves nothing locked");
        h.Queue.ActiveCount.Should().Be(3);
        processor.GetStatistics()!.AbandonedAtStop.Should().Be(3);
        h.Errors.Should().BeEmpty("a handler canceled by the stop is not an error");

        Volatile.Write(ref stopping, false);
        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 3, "three completions after the restart");
        await processor.StopProcessingAsync();
        h.Queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_disposed_processor_refuses_to_start_and_disposing_twice_is_harmless()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 0, TimeSpan.FromSeconds(5));
        var processor = new ServiceBusPumpProcessor(h.Sb.Transport, "nowhere");
        processor.ProcessMessageAsync += _ => Task.CompletedTask;
        processor.ProcessErrorAsync += _ => Task.CompletedTask;

        await processor.DisposeAsync();
        await processor.DisposeAsync(); // twice is fine
        await processor.Invoking(p => p.StartProcessingAsync()).Should().ThrowAsync<ObjectDisposedException>();
    }

    [Fact]
    public void The_pump_gets_the_processors_concurrency_settlement_mode_name_and_shutdown_timeout()
    {
        new ServiceBusPumpProcessorOptions().PumpOptions().ReceiveDuringSettlement.Should().BeTrue("the pump's default");
        new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 3, ReceiveDuringSettlement = false, Identifier = "orders-1", ShutdownTimeout = TimeSpan.FromSeconds(2) }
            .PumpOptions()
            .Should().BeEquivalentTo(new { Name = "orders-1", MaxInFlight = 3, ReceiveDuringSettlement = false, ShutdownTimeout = TimeSpan.FromSeconds(2) });
    }

    [Fact]
    public async Task Each_processor_has_an_identifier_of_its_own_made_from_the_entity_path_and_its_metrics_carry_it()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 0, TimeSpan.FromSeconds(30));
        var tags = new ConcurrentQueue<string>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == MessagePumpDiagnostics.MeterName)
                {
                    l.EnableMeasurementEvents(instrument);
                }
            },
        };
        listener.SetMeasurementEventCallback<long>((_, _, measured, _) =>
        {
            foreach (var tag in measured)
            {
                if (tag.Key == MessagePumpDiagnostics.PumpTag && tag.Value is string name)
                {
                    tags.Enqueue(name);
                }
            }
        });
        listener.Start();
        await using var first = h.Create(_ => Task.CompletedTask, new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 1 });
        await using var second = h.Create(_ => Task.CompletedTask, new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 1 });

        // One message each, one processor at a time: both pumps measure, each under its own name.
        await first.StartProcessingAsync();
        h.Queue.Send(Encoding.UTF8.GetBytes("a"), "a");
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 1, "the first processor's completion");
        await first.StopProcessingAsync();
        await second.StartProcessingAsync();
        h.Queue.Send(Encoding.UTF8.GetBytes("b"), "b");
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 2, "the second processor's completion");
        await second.StopProcessingAsync();

        first.Identifier.Should().StartWith("orders-").And.NotBe(second.Identifier);
        Guid.TryParse(first.Identifier["orders-".Length..], out _).Should().BeTrue("ServiceBusProcessor's default: the entity path, a dash and a GUID");
        tags.Should().Contain(first.Identifier).And.Contain(second.Identifier);
    }

    [Fact]
    public async Task An_identifier_set_in_the_options_is_kept_and_an_empty_one_gets_the_default()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 0, TimeSpan.FromSeconds(30));
        await using var named = h.Create(_ => Task.CompletedTask, new ServiceBusPumpProcessorOptions { Identifier = "billing" });
        await using var empty = h.Create(_ => Task.CompletedTask, new ServiceBusPumpProcessorOptions { Identifier = string.Empty });

        named.Identifier.Should().Be("billing");
        named.ToString().Should().Contain("'billing'");
        empty.Identifier.Should().StartWith("orders-", "an empty identifier is the SDK's 'none given'");
    }

    [Fact]
    public void Bad_options_and_arguments_throw_naming_them()
    {
        var transport = new ServiceBusTransport("Endpoint=sb://127.0.0.1:1;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true");
        ParamOf(() => new ServiceBusPumpProcessor(transport, "q", new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 0 })).Should().Be("MaxConcurrentCalls");
        ParamOf(() => new ServiceBusPumpProcessor(transport, "q", new ServiceBusPumpProcessorOptions { ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete })).Should().Be("ReceiveMode");
        ParamOf(() => new ServiceBusPumpProcessor(transport, "q", new ServiceBusPumpProcessorOptions { MaxAutoLockRenewalDuration = TimeSpan.Zero })).Should().Be("MaxAutoLockRenewalDuration");
        ParamOf(() => new ServiceBusPumpProcessor(transport, "q", new ServiceBusPumpProcessorOptions { PrefetchCount = -1 })).Should().Be("PrefetchCount");
        ParamOf(() => new ServiceBusPumpProcessor(transport, "q", new ServiceBusPumpProcessorOptions { LockDuration = TimeSpan.Zero })).Should().Be("LockDuration");
        ParamOf(() => new ServiceBusPumpProcessor(transport, "q", new ServiceBusPumpProcessorOptions { ShutdownTimeout = TimeSpan.FromSeconds(-2) })).Should().Be("ShutdownTimeout");
        ParamOf(() => new ServiceBusPumpProcessor(transport, "q", new ServiceBusPumpProcessorOptions { Identifier = " " })).Should().Be("Identifier");
        ParamOf(() => new ServiceBusPumpProcessor(transport, " ")).Should().Be("queueName");
        ParamOf(() => new ServiceBusPumpProcessor(transport, "t", "")).Should().Be("subscriptionName");
        ParamOf(() => new ServiceBusPumpProcessor(null!, "q")).Should().Be("transport");
        ParamOf(() => ServiceBusClientPumpExtensions.CreatePumpProcessor(null!, "q")).Should().Be("client");
        ParamOf(() => transport.Client.CreatePumpProcessor("t", " ")).Should().Be("subscriptionName");
    }

    private static string? ParamOf(Func<object> create)
    {
        try
        {
            create();
        }
        catch (ArgumentException ex)
        {
            return ex.ParamName;
        }

        return "(no exception)";
    }
}
