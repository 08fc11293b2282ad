using System.Collections.Concurrent;
using System.Diagnostics;

namespace PriorityAsync.MessagePump.Tests.Docs;

/// <summary>
/// The producer and listener of docs/message-pump.md's tracing example, run in the solution's tests (the page's whole
/// program is compiled and run against the packages by tests/DocsCompile).
/// </summary>
internal static class TracingSample
{
    public static async Task<(string Producer, IReadOnlyCollection<string> Spans)> RunAsync()
    {
        var lines = new ConcurrentQueue<string>();
        var queue = new InMemoryTransport().CreateQueue("invoices");
        var body = new byte[] { 1 };
        string? producer = null;

        using var listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == MessagePumpDiagnostics.ActivitySourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = span => lines.Enqueue($"{span.DisplayName} {span.TraceId} {span.Status}"),
        };
        ActivitySource.AddActivityListener(listener);

        // Producer: send inside an activity, with its trace context in the headers.
        using (var send = new Activity("send invoices").Start())
        {
            var headers = new Dictionary<string, string>();
            MessagePumpDiagnostics.InjectTraceContext(headers);
            queue.Send(body, messageId: null, headers);
            producer = send.TraceId.ToString();
        }

        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        await using (var pump = new PriorityMessagePump(queue, (_, _) => Task.CompletedTask, scheduler, new MessagePumpOptions { Name = "tracing-sample" }))
        {
            await pump.StartAsync();
            while (queue.GetStatistics().Completed < 1)
            {
                await Task.Delay(10);
            }
        }

        return (producer, lines.Where(l => l.StartsWith("process invoices ", StringComparison.Ordinal)).ToList());
    }
}
