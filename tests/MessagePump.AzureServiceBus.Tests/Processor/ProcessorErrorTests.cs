using System.Collections.Concurrent;
using System.Text;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Processor;

/// <summary>
/// What <see cref="ServiceBusPumpProcessor"/> tells its error handler, with the real SDK client against the test broker:
/// handler failures, a lost lock, failed receives, and an error handler that throws. Outcomes only, never durations.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class ProcessorErrorTests(ITestOutputHelper output)
{
    [Fact]
    public async Task A_handler_that_throws_is_reported_and_its_message_abandoned_and_an_error_handler_that_throws_stops_nothing()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 2, TimeSpan.FromSeconds(5));
        var reported = new ConcurrentQueue<ProcessErrorEventArgs>();
        await using var processor = new ServiceBusPumpProcessor(h.Sb.Transport, "orders", new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 2 });
        processor.ProcessMessageAsync += args => args.Message.DeliveryCount == 1
            ? throw new InvalidOperationException($"first delivery of {args.Message.MessageId} fails")
            : Task.CompletedTask;
        processor.ProcessErrorAsync += args =>
        {
            reported.Enqueue(args);
            throw new InvalidOperationException("the error handler fails too"); // logged, goes no further
        };

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 2, "both redeliveries completed");
        await processor.StopProcessingAsync();

        reported.Should().HaveCount(2).And.OnlyContain(e => e.ErrorSource == ServiceBusErrorSource.ProcessMessageCallback
            && e.Exception is InvalidOperationException
            && e.EntityPath == "orders"
            && e.FullyQualifiedNamespace == processor.FullyQualifiedNamespace
            && e.Identifier == processor.Identifier);
        h.Queue.CompletionsOf("m0").Should().Be(1);
        h.Queue.CompletionsOf("m1").Should().Be(1);
        h.Queue.LockedCount.Should().Be(0);
        processor.GetStatistics()!.Abandoned.Should().Be(2);
        processor.GetStatistics()!.HandlerFailures.Should().Be(2, "each handler that threw is counted, as a bare pump counts it");
    }

    [Fact]
    public async Task A_lock_lost_while_the_handler_runs_cancels_its_token_is_reported_as_MessageLockLost_and_the_redelivery_completes_once()
    {
        // 2 s locks: the pump renews once 1 s remains; the broker answers that renewal 410.
        await using var h = await ProcessorHarness.StartAsync(messages: 1, TimeSpan.FromSeconds(2));
        h.Sb.Broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost);
        var deliveries = new ConcurrentQueue<int>();
        await using var processor = h.Create(async args =>
        {
            deliveries.Enqueue(args.Message.DeliveryCount);
            if (args.Message.DeliveryCount == 1)
            {
                await Task.Delay(Timeout.InfiniteTimeSpan, args.CancellationToken); // until the lock is lost
            }
        });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 1, "the redelivery's completion");
        await processor.StopProcessingAsync();

        output.WriteLine(string.Join("; ", h.Errors.Select(e => $"{e.ErrorSource}: {e.Exception.Message}")));
        var lost = h.Errors.Should().ContainSingle().Subject;
        lost.ErrorSource.Should().Be(ServiceBusErrorSource.RenewLock);
        lost.Exception.Should().BeOfType<ServiceBusException>().Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        deliveries.Should().Equal(1, 2);
        processor.GetStatistics()!.LeasesLost.Should().Be(1);
        h.Queue.CompletionsOf("m0").Should().Be(1);
        h.Queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_lock_lost_that_the_handlers_own_complete_finds_is_reported_and_counted_even_when_the_handler_catches_it()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 1, TimeSpan.FromSeconds(5));
        var caught = new ConcurrentQueue<ServiceBusException>();
        await using var processor = h.Create(async args =>
        {
            if (args.Message.DeliveryCount == 1)
            {
                await h.Sb.Broker.Faults.DetachReceiveLinksAsync("orders"); // its lock goes with the link
                try
                {
                    await args.CompleteMessageAsync(args.Message);
                }
                catch (ServiceBusException ex) when (ex.Reason == ServiceBusFailureReason.MessageLockLost)
                {
                    caught.Enqueue(ex); // the handler's own business: the processor still reports the lost lock
                }
            }
        });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 1, "the redelivery's completion");
        await processor.StopProcessingAsync();

        output.WriteLine(string.Join("; ", h.Errors.Select(e => $"{e.ErrorSource}: {e.Exception.Message}")));
        var thrown = caught.Should().ContainSingle().Subject;
        var lost = h.Errors.Should().ContainSingle().Subject;
        lost.ErrorSource.Should().Be(ServiceBusErrorSource.RenewLock);
        lost.Exception.Should().BeSameAs(thrown);
        var stats = processor.GetStatistics()!;
        stats.LeasesLost.Should().Be(1);
        stats.Completed.Should().Be(1);
        h.Queue.CompletionsOf("m0").Should().Be(1);
        h.Queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_lock_lost_thrown_by_the_handlers_own_complete_and_left_to_escape_is_reported_once_as_the_handlers_failure()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 1, TimeSpan.FromSeconds(5));
        await using var processor = h.Create(async args =>
        {
            if (args.Message.DeliveryCount == 1)
            {
                await h.Sb.Broker.Faults.DetachReceiveLinksAsync("orders");
                await args.CompleteMessageAsync(args.Message); // throws MessageLockLost, not caught
            }
        });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 1, "the redelivery's completion");
        await processor.StopProcessingAsync();

        output.WriteLine(string.Join("; ", h.Errors.Select(e => $"{e.ErrorSource}: {e.Exception.Message}")));
        var reported = h.Errors.Should().ContainSingle().Subject;
        reported.ErrorSource.Should().Be(ServiceBusErrorSource.ProcessMessageCallback);
        reported.Exception.Should().BeOfType<ServiceBusException>().Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        processor.GetStatistics()!.LeasesLost.Should().Be(1);
        h.Queue.CompletionsOf("m0").Should().Be(1);
    }

    [Fact]
    public async Task A_failed_receive_is_reported_with_the_Receive_source_and_processing_goes_on()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 1, TimeSpan.FromSeconds(5));
        h.Sb.Broker.Faults.FailNextReceives(3, ServiceBusTestFault.ServerBusy); // the link's attach refused 3 times: the client's 2 retries run out
        await using var processor = h.Create(_ => Task.CompletedTask);

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 1, "the completion after the failed receive");
        await processor.StopProcessingAsync();

        output.WriteLine(string.Join("; ", h.Errors.Select(e => $"{e.ErrorSource}: {e.Exception.Message}")));
        h.Errors.Should().NotBeEmpty().And.OnlyContain(e => e.ErrorSource == ServiceBusErrorSource.Receive);
        h.Queue.CompletionsOf("m0").Should().Be(1);
    }

    [Fact]
    public async Task A_queue_created_after_the_processor_started_is_consumed_and_each_failed_receive_is_reported_as_MessagingEntityNotFound()
    {
        await using var sb = await SbHarness.StartAsync(maxRetries: 0);
        var errors = new ConcurrentQueue<ProcessErrorEventArgs>();
        var handled = new ConcurrentQueue<string>();
        await using var processor = new ServiceBusPumpProcessor(sb.Transport, "late");
        processor.ProcessMessageAsync += args =>
        {
            handled.Enqueue(args.Message.MessageId);
            return Task.CompletedTask;
        };
        processor.ProcessErrorAsync += args =>
        {
            errors.Enqueue(args);
            return Task.CompletedTask;
        };

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => !errors.IsEmpty, "the first failed receive reported");
        var queue = sb.Broker.CreateQueue("late", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(Encoding.UTF8.GetBytes("x"), "x");
        await ProcessorHarness.UntilAsync(() => queue.CompletedCount == 1, "the message of the queue created late completed");
        var processing = processor.IsProcessing;
        await processor.StopProcessingAsync();

        output.WriteLine(string.Join("; ", errors.Select(e => $"{e.ErrorSource}: {e.Exception.GetType().Name} {e.Exception.Message}")));
        processing.Should().BeTrue();
        handled.Should().Equal("x");
        errors.Should().NotBeEmpty().And.OnlyContain(e => e.ErrorSource == ServiceBusErrorSource.Receive
            && e.Exception is ServiceBusException
            && ((ServiceBusException)e.Exception).Reason == ServiceBusFailureReason.MessagingEntityNotFound
            && e.EntityPath == "late"
            && e.Identifier == processor.Identifier);
    }

    [Fact]
    public async Task A_queue_deleted_and_created_again_while_processing_is_reported_as_MessagingEntityNotFound_and_consumed_again()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 1, TimeSpan.FromSeconds(30));
        await using var processor = h.Create(_ => Task.CompletedTask, new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 1 });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 1, "the first queue's message completed");
        await h.Sb.Broker.DeleteQueueAsync("orders");
        await ProcessorHarness.UntilAsync(() => !h.Errors.IsEmpty, "the deleted queue reported");
        var again = h.Sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        again.Send(Encoding.UTF8.GetBytes("y"), "y");
        await ProcessorHarness.UntilAsync(() => again.CompletedCount == 1, "the message of the queue created again completed");
        await processor.StopProcessingAsync();

        output.WriteLine(string.Join("; ", h.Errors.Select(e => $"{e.ErrorSource}: {e.Exception.GetType().Name} {e.Exception.Message}")));
        h.Errors.Should().NotBeEmpty().And.OnlyContain(e => e.ErrorSource == ServiceBusErrorSource.Receive
            && ((ServiceBusException)e.Exception).Reason == ServiceBusFailureReason.MessagingEntityNotFound);
        again.CompletionsOf("y").Should().Be(1);
        again.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task The_handler_time_limit_cancels_the_token_while_the_lock_is_kept_and_the_message_is_abandoned_not_lost()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 1, TimeSpan.FromSeconds(5));
        var deliveries = new ConcurrentQueue<int>();
        await using var processor = h.Create(
            async args =>
            {
                deliveries.Enqueue(args.Message.DeliveryCount);
                if (args.Message.DeliveryCount == 1)
                {
                    await Task.Delay(Timeout.InfiniteTimeSpan, args.CancellationToken); // until the limit
                }
            },
            new ServiceBusPumpProcessorOptions { MaxAutoLockRenewalDuration = TimeSpan.FromMilliseconds(300) });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 1, "the redelivery's completion");
        await processor.StopProcessingAsync();

        h.Errors.Should().ContainSingle().Which.ErrorSource.Should().Be(ServiceBusErrorSource.ProcessMessageCallback);
        h.Errors.Single().Exception.Should().BeAssignableTo<OperationCanceledException>();
        deliveries.Should().Equal(1, 2);
        processor.GetStatistics()!.LeasesLost.Should().Be(0);
        processor.GetStatistics()!.Abandoned.Should().Be(1);
    }
}
