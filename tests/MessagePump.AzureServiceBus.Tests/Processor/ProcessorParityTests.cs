using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Processor;

/// <summary>
/// The <see cref="ServiceBusProcessor"/> members users rely on, on <see cref="ServiceBusPumpProcessor"/>, with the real
/// SDK client against the test broker: defer and the deferred messages' return, renewing from the handler,
/// <c>propertiesToModify</c> on abandon and dead-letter, and processing the dead-letter sub-queue. Outcomes only, never durations.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class ProcessorParityTests(ITestOutputHelper output)
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(5);

    [Fact]
    public async Task A_deferred_message_is_counted_as_deferred_and_comes_back_to_the_handler_by_sequence_number_with_its_properties()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 2, LockDuration);
        var handled = new ConcurrentQueue<(string Id, int DeliveryCount, object? DeferredBy)>();
        var deferredMeasured = new ConcurrentQueue<(string? Pump, string? Operation)>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == MessagePumpDiagnostics.MeterName && instrument.Name == MessagePumpMetrics.DeferredMessagesName)
                {
                    l.EnableMeasurementEvents(instrument);
                }
            },
        };
        listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            string? pump = null, operation = null;
            foreach (var tag in tags)
            {
                pump = tag.Key == MessagePumpDiagnostics.PumpTag ? tag.Value as string : pump;
                operation = tag.Key == MessagePumpDiagnostics.OperationNameTag ? tag.Value as string : operation;
            }

            for (var i = 0; i < value; i++)
            {
                deferredMeasured.Enqueue((pump, operation));
            }
        });
        listener.Start();
        ServiceBusPumpProcessor? self = null;
        await using var processor = h.Create(async args =>
        {
            handled.Enqueue((args.Message.MessageId, args.Message.DeliveryCount, args.Message.ApplicationProperties.GetValueOrDefault("deferred-by")));
            if (args.Message.MessageId == "m0" && handled.Count(m => m.Id == "m0") == 1)
            {
                await args.DeferMessageAsync(args.Message, new Dictionary<string, object> { ["deferred-by"] = "handler" });
                await self!.ProcessDeferredMessagesAsync([args.Message.SequenceNumber]); // from the handler: it does not wait for the handling
            }
        });
        self = processor;

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 2, "m1 completed, and m0 once it came back");
        await processor.StopProcessingAsync();

        output.WriteLine(string.Join("; ", handled));
        handled.Where(m => m.Id == "m0").Select(m => m.DeferredBy).Should().Equal([null, "handler"]);
        h.Queue.CompletionsOf("m0").Should().Be(1);
        h.Queue.CompletionsOf("m1").Should().Be(1);
        h.Queue.DeferredCount.Should().Be(0);
        h.Queue.LockedCount.Should().Be(0);
        h.Errors.Should().BeEmpty();
        var stats = processor.GetStatistics()!;
        output.WriteLine(stats.ToString());
        stats.Received.Should().Be(3);
        stats.Deferred.Should().Be(1);
        deferredMeasured.Where(m => m.Pump == processor.Identifier).Should().Equal([(processor.Identifier, MessagePumpDiagnostics.DeferOperation)]);
        stats.Completed.Should().Be(2);
        stats.Abandoned.Should().Be(0);
        stats.LeasesLost.Should().Be(0);
        stats.Received.Should().Be(stats.Completed + stats.Abandoned + stats.DeadLettered + stats.Deferred + stats.LeasesLost + stats.SettleFailures);
    }

    [Fact]
    public async Task A_deferred_message_that_comes_back_can_be_deferred_again_and_settled_by_the_handler_and_an_unknown_sequence_number_is_MessageNotFound()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 1, LockDuration);
        var sequenceNumbers = new ConcurrentQueue<long>();
        await using var processor = h.Create(async args =>
        {
            sequenceNumbers.Enqueue(args.Message.SequenceNumber);
            if (sequenceNumbers.Count < 3)
            {
                await args.DeferMessageAsync(args.Message);
            }
            else
            {
                await args.DeadLetterMessageAsync(args.Message, "Deferred twice");
            }
        });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.DeferredCount == 1, "the first deferral");
        var sequenceNumber = sequenceNumbers.Single();
        await processor.ProcessDeferredMessagesAsync([sequenceNumber]);
        await ProcessorHarness.UntilAsync(() => sequenceNumbers.Count == 2 && h.Queue.DeferredCount == 1, "the second deferral");
        var notFound = await Record(() => processor.ProcessDeferredMessagesAsync([sequenceNumber, sequenceNumber + 1000]));
        await processor.ProcessDeferredMessagesAsync([sequenceNumber]);
        await ProcessorHarness.UntilAsync(() => h.Queue.DeadLetterCount == 1, "the dead-letter");
        await processor.StopProcessingAsync();

        notFound.Should().BeOfType<ServiceBusException>().Which.Reason.Should().Be(ServiceBusFailureReason.MessageNotFound);
        sequenceNumbers.Should().Equal(sequenceNumber, sequenceNumber, sequenceNumber);
        h.Queue.DeferredCount.Should().Be(0);
        h.Queue.LockedCount.Should().Be(0);
        h.Errors.Should().BeEmpty();
        var stats = processor.GetStatistics()!;
        stats.Deferred.Should().Be(2);
        stats.DeadLettered.Should().Be(1);
        stats.LeasesLost.Should().Be(0);
        (await Record(() => processor.ProcessDeferredMessagesAsync([sequenceNumber]))).Should().BeOfType<InvalidOperationException>();
        (await Record(() => processor.ProcessDeferredMessagesAsync([]))).Should().BeOfType<ArgumentException>().Which.ParamName.Should().Be("sequenceNumbers");
    }

    [Fact]
    public async Task Renewing_from_the_handler_moves_the_lock_at_the_broker_and_a_lost_lock_or_a_settled_message_is_refused_like_the_SDK()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 2, LockDuration);
        var moved = new ConcurrentQueue<bool>();
        var refused = new ConcurrentQueue<Exception>();
        await using var processor = h.Create(
            async args =>
            {
                if (args.Message.MessageId == "m0")
                {
                    var before = args.Message.LockedUntil;
                    await Task.Delay(TimeSpan.FromMilliseconds(50)); // the broker's clock moves on: the renewed lock ends later
                    await args.RenewMessageLockAsync(args.Message);
                    moved.Enqueue(args.Message.LockedUntil > before);
                    await args.CompleteMessageAsync(args.Message);
                    refused.Enqueue(await Record(() => args.RenewMessageLockAsync(args.Message)));
                }
                else if (args.Message.DeliveryCount == 1)
                {
                    // The broker loses m1's lock at the handler's renewal: the handler hears it as the SDK's
                    // MessageLockLost; it returns, the processor's complete finds the lock gone, and m1 comes again.
                    h.Sb.Broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost);
                    refused.Enqueue(await Record(() => args.RenewMessageLockAsync(args.Message)));
                    refused.Enqueue(await Record(() => args.RenewMessageLockAsync(ServiceBusModelFactory.ServiceBusReceivedMessage(messageId: "other"))));
                }
            },
            new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 1 });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 2, "both completions");
        await processor.StopProcessingAsync();

        moved.Should().Equal(true);
        h.Queue.RenewCount.Should().BeGreaterThanOrEqualTo(1, "the handler's renewal reached the broker");
        var list = refused.ToArray();
        list.Should().HaveCount(3);
        list[0].Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("already settled");
        list[1].Should().BeOfType<ServiceBusException>().Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        list[2].Should().BeOfType<ArgumentException>().Which.ParamName.Should().Be("message");
        var lost = h.Errors.Should().ContainSingle().Subject;
        lost.ErrorSource.Should().Be(ServiceBusErrorSource.Complete);
        lost.Exception.Should().BeOfType<ServiceBusException>().Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        h.Queue.CompletionsOf("m1").Should().Be(1);
        var stats = processor.GetStatistics()!;
        stats.Completed.Should().Be(2);
        stats.LeasesLost.Should().Be(1);
    }

    [Fact]
    public async Task Properties_to_modify_travel_with_abandon_and_dead_letter_and_a_dead_letter_processor_handles_the_dead_letters()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 2, LockDuration);
        var stamp = new DateTime(2026, 11, 28, 5, 0, 0, DateTimeKind.Utc);
        var seen = new ConcurrentQueue<string>();
        await using var processor = h.Create(async args =>
        {
            var message = args.Message;
            var properties = message.ApplicationProperties;
            seen.Enqueue($"{message.MessageId}/{message.DeliveryCount}");
            switch (message.MessageId, message.DeliveryCount)
            {
                case (_, 1):
                    await args.AbandonMessageAsync(message, new Dictionary<string, object> { ["attempt"] = 1, ["failed-at"] = stamp, ["last-error"] = "timeout" });
                    break;
                case ("m0", _):
                    properties["attempt"].Should().Be(1);
                    properties["failed-at"].Should().Be(stamp);
                    await args.DeadLetterMessageAsync(message, new Dictionary<string, object> { ["attempt"] = 2L, ["last-error"] = "poison" }, "Poison", "bad body");
                    break;
                default:
                    properties["last-error"].Should().Be("timeout");
                    await args.DeadLetterMessageAsync(message, new Dictionary<string, object> { ["attempt"] = 2L });
                    break;
            }
        });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.DeadLetterCount == 2, "both dead-letters");
        await processor.StopProcessingAsync();
        h.Errors.Should().BeEmpty();
        var stats = processor.GetStatistics()!;
        stats.Abandoned.Should().Be(2);
        stats.DeadLettered.Should().Be(2);

        var dead = new ConcurrentQueue<(string Id, string? Reason, string? Description, object Attempt, object LastError, object FailedAt)>();
        var deadLetterErrors = new ConcurrentQueue<ProcessErrorEventArgs>();
        await using var deadLetters = new ServiceBusPumpProcessor(h.Sb.Transport, "orders", new ServiceBusPumpProcessorOptions { SubQueue = SubQueue.DeadLetter });
        deadLetters.ProcessMessageAsync += args =>
        {
            var p = args.Message.ApplicationProperties;
            dead.Enqueue((args.Message.MessageId, args.Message.DeadLetterReason, args.Message.DeadLetterErrorDescription, p["attempt"], p["last-error"], p["failed-at"]));
            return Task.CompletedTask;
        };
        deadLetters.ProcessErrorAsync += args =>
        {
            deadLetterErrors.Enqueue(args);
            return Task.CompletedTask;
        };

        await deadLetters.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.DeadLetterQueue!.CompletedCount == 2, "the dead letters completed from the dead-letter queue");
        await deadLetters.StopProcessingAsync();

        output.WriteLine(string.Join("; ", seen));
        await using var sdkProcessor = h.Sb.Transport.Client.CreateProcessor("orders", new ServiceBusProcessorOptions { SubQueue = SubQueue.DeadLetter });
        deadLetters.EntityPath.Should().Be(sdkProcessor.EntityPath);
        deadLetterErrors.Should().BeEmpty();
        dead.OrderBy(d => d.Id, StringComparer.Ordinal).Should().Equal(
            ("m0", "Poison", "bad body", 2L, "poison", stamp),
            ("m1", null, null, 2L, "timeout", stamp));
        h.Queue.DeadLetterQueue!.LockedCount.Should().Be(0);
        deadLetters.GetStatistics()!.Completed.Should().Be(2);
    }

    [Fact]
    public async Task UpdateConcurrency_while_processing_raises_and_lowers_how_many_handlers_run_at_once()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 6, LockDuration);
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var running = 0;
        var lowered = 0;
        var peakAfterLowering = 0;
        await using var processor = h.Create(
            async args =>
            {
                var now = Interlocked.Increment(ref running);
                if (Volatile.Read(ref lowered) == 1)
                {
                    InterlockedMax(ref peakAfterLowering, now);
                }

                await gate.Task;
                Interlocked.Decrement(ref running);
            },
            new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 1 });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => Volatile.Read(ref running) == 1, "the first handler");
        processor.UpdateConcurrency(3);
        await ProcessorHarness.UntilAsync(() => Volatile.Read(ref running) == 3, "three handlers at once after UpdateConcurrency(3)");
        processor.UpdateConcurrency(1);
        Volatile.Write(ref lowered, 1);
        gate.SetResult();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 6, "all six completed");
        await processor.StopProcessingAsync();

        peakAfterLowering.Should().Be(1, "after UpdateConcurrency(1) the pump received one message at a time");
        processor.GetStatistics()!.PeakInFlight.Should().BeGreaterThanOrEqualTo(3);
        h.Errors.Should().BeEmpty();
        FluentActions.Invoking(() => processor.UpdateConcurrency(0)).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("maxConcurrentCalls");
    }

    private static void InterlockedMax(ref int target, int value)
    {
        var current = Volatile.Read(ref target);
        while (value > current && Interlocked.CompareExchange(ref target, value, current) is var seen && seen != current)
        {
            current = seen;
        }
    }

    private static async Task<Exception> Record(Func<Task> call)
    {
        try
        {
            await call();
        }
        catch (Exception ex)
        {
            return ex;
        }

        return new InvalidOperationException("no exception");
    }
}
