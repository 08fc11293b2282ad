using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.EndToEnd;

/// <summary>The pump's spans over the Service Bus source carry OpenTelemetry's messaging names for servicebus and link to the producer.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class TelemetryEndToEndTests
{
    [Fact]
    public async Task Process_spans_name_servicebus_the_entity_and_the_operation_and_continue_the_producer_s_trace()
    {
        const string traceId = "0af7651916cd43dd8448eb211c80319c";
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(Encoding.UTF8.GetBytes("m"), "m", applicationProperties: new Dictionary<string, object> { ["Diagnostic-Id"] = $"00-{traceId}-b7ad6b7169203331-01" });
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { MaxWaitTime = TimeSpan.FromMilliseconds(200) });
        var spans = new ConcurrentQueue<Activity>();
        using var listener = new ActivityListener
        {
            ShouldListenTo = s => s.Name == MessagePumpDiagnostics.ActivitySourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = spans.Enqueue,
        };
        ActivitySource.AddActivityListener(listener);

        await PumpRun.UntilAsync(source, (_, _) => Task.CompletedTask, () => queue.CompletedCount == 1, "the completion");

        var process = spans.Where(s => Equals(s.GetTagItem(MessagePumpDiagnostics.OperationNameTag), MessagePumpDiagnostics.ProcessOperation)
            && Equals(s.GetTagItem(MessagePumpDiagnostics.DestinationNameTag), "orders")).Should().ContainSingle().Subject;
        process.GetTagItem(MessagePumpDiagnostics.MessagingSystemTag).Should().Be("servicebus");
        process.GetTagItem(MessagePumpDiagnostics.MessageIdTag).Should().Be("m");
        process.TraceId.ToHexString().Should().Be(traceId, "the SDK's Diagnostic-Id is the producer's traceparent");
    }
}
