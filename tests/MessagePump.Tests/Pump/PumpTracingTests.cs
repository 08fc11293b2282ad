using System.Collections.Concurrent;
using System.Diagnostics;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// The receive span of each non-empty receive and the process span of each delivery: parent and links from the
/// producer's headers, attributes, error status, current in the handler.
/// </summary>
public class PumpTracingTests
{
    [Fact]
    public void ProcessSpan_FollowsTheProducer_IsCurrentInTheHandler_AndRecordsFailures()
    {
        const string name = "tracing-test-pump";
        var stopped = new ConcurrentBag<Activity>();
        using var listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == MessagePumpDiagnostics.ActivitySourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = activity =>
            {
                if ((string?)activity.GetTagItem(MessagePumpDiagnostics.PumpTag) == name)
                {
                    stopped.Add(activity);
                }
            },
        };
        ActivitySource.AddActivityListener(listener);

        using var producer = new Activity("send orders").SetIdFormat(ActivityIdFormat.W3C);
        producer.TraceStateString = "congo=t61rcWkgMzE";
        producer.Start();
        var headers = MessagePumpDiagnostics.InjectTraceContext(new Dictionary<string, string>(), producer);
        producer.Stop();
        headers.Should().ContainKey("traceparent");

        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send(new byte[] { 1 }, "traced", new Dictionary<string, string>(headers));
        queue.Send(new byte[] { 2 }, "untraced");

        var inHandler = new ConcurrentDictionary<string, (Activity? Current, string? ChildParent)>();
        ActivityTraceId hostTrace = default;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var pump = new PriorityMessagePump(
                queue,
                async (context, cancellationToken) =>
                {
                    // A user span started in the handler nests under the process span.
                    using var child = new Activity("user work").Start();
                    await Task.Delay(TimeSpan.FromSeconds(1), context.TimeProvider, cancellationToken);
                    inHandler[$"{context.Message.MessageId}/{context.Message.DeliveryCount}"] = (Activity.Current?.Parent, child.ParentSpanId.ToHexString());
                    if (context.Message.MessageId == "traced" && context.Message.DeliveryCount == 1)
                    {
                        throw new InvalidOperationException("first delivery fails");
                    }
                },
                scheduler,
                new MessagePumpOptions { Name = name });

            // An activity current when the pump starts (a host's) is no message's parent.
            using (var host = new Activity("host start").SetIdFormat(ActivityIdFormat.W3C).Start())
            {
                hostTrace = host.TraceId;
                await pump.StartAsync();
            }

            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 2, scheduler.TimeProvider, TimeSpan.FromHours(1));
        });

        var receives = stopped.Where(s => s.Kind == ActivityKind.Client).ToList();
        receives.Should().NotBeEmpty().And.OnlyContain(s => s.DisplayName == "receive orders"
            && s.ParentSpanId == default(ActivitySpanId)
            && (string?)s.GetTagItem(MessagePumpDiagnostics.OperationNameTag) == "receive"
            && (string?)s.GetTagItem(MessagePumpDiagnostics.OperationTypeTag) == "receive"
            && (string?)s.GetTagItem(MessagePumpDiagnostics.DestinationNameTag) == "orders");
        receives.Sum(s => (int)s.GetTagItem(MessagePumpDiagnostics.BatchMessageCountTag)!).Should().Be(3, "three deliveries, no span for an empty receive");
        receives.SelectMany(s => s.Links).Should().HaveCount(2, "one link per delivery of the traced message")
            .And.OnlyContain(l => l.Context.TraceId == producer.TraceId && l.Context.SpanId == producer.SpanId);

        var spans = stopped.Where(s => s.Kind != ActivityKind.Client).ToList();
        spans.Should().HaveCount(3);
        spans.Should().OnlyContain(s => s.Kind == ActivityKind.Consumer
            && s.Source.Name == MessagePumpDiagnostics.ActivitySourceName
            && s.DisplayName == "process orders"
            && (string?)s.GetTagItem(MessagePumpDiagnostics.MessagingSystemTag) == InMemoryQueue.MessagingSystemName
            && (string?)s.GetTagItem(MessagePumpDiagnostics.DestinationNameTag) == "orders"
            && (string?)s.GetTagItem(MessagePumpDiagnostics.OperationNameTag) == "process"
            && (string?)s.GetTagItem(MessagePumpDiagnostics.OperationTypeTag) == "process");

        var traced = spans.Where(s => (string?)s.GetTagItem(MessagePumpDiagnostics.MessageIdTag) == "traced").OrderBy(s => (int)s.GetTagItem(MessagePumpDiagnostics.DeliveryCountTag)!).ToList();
        traced.Should().HaveCount(2);
        traced.Should().OnlyContain(s => s.TraceId == producer.TraceId
            && s.ParentSpanId == producer.SpanId
            && s.HasRemoteParent
            && s.TraceStateString == "congo=t61rcWkgMzE"
            && s.Links.Count() == 1 && s.Links.Single().Context.SpanId == producer.SpanId && s.Links.Single().Context.TraceId == producer.TraceId);
        traced[0].Status.Should().Be(ActivityStatusCode.Error);
        traced[0].StatusDescription.Should().Be("first delivery fails");
        traced[0].GetTagItem(MessagePumpDiagnostics.ErrorTypeTag).Should().Be(typeof(InvalidOperationException).FullName);
        traced[0].Events.Should().Contain(e => e.Name == "exception");
        traced[1].Status.Should().Be(ActivityStatusCode.Unset);
        traced[1].GetTagItem(MessagePumpDiagnostics.ErrorTypeTag).Should().BeNull();

        var untraced = spans.Single(s => (string?)s.GetTagItem(MessagePumpDiagnostics.MessageIdTag) == "untraced");
        untraced.ParentSpanId.Should().Be(default(ActivitySpanId), "no producer context: a root span");
        untraced.TraceId.Should().NotBe(hostTrace, "the activity current at start is not the parent");
        untraced.Links.Should().BeEmpty();

        foreach (var span in spans)
        {
            var key = $"{span.GetTagItem(MessagePumpDiagnostics.MessageIdTag)}/{span.GetTagItem(MessagePumpDiagnostics.DeliveryCountTag)}";
            inHandler[key].Current.Should().BeSameAs(span, "the process span is Activity.Current inside the handler");
            inHandler[key].ChildParent.Should().Be(span.SpanId.ToHexString(), "a user span nests under the process span");
        }
    }

    [Fact]
    public void HeadersThatThrow_CostTheSpansTheirProducer_NotTheMessagesTheirProcessing()
    {
        const string name = "throwing-headers-pump";
        var stopped = new ConcurrentBag<Activity>();
        using var listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == MessagePumpDiagnostics.ActivitySourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = activity =>
            {
                if ((string?)activity.GetTagItem(MessagePumpDiagnostics.PumpTag) == name)
                {
                    stopped.Add(activity);
                }
            },
        };
        ActivitySource.AddActivityListener(listener);

        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("broken", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        for (var i = 0; i < 3; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        VirtualRun.Run(clock, async scheduler =>
        {
            await using var pump = new PriorityMessagePump(new ThrowingHeadersSource(queue), (_, _) => Task.CompletedTask, scheduler, new MessagePumpOptions { Name = name });
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 3, scheduler.TimeProvider, TimeSpan.FromHours(1));
        });

        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 3, LeasesLost = 0, Abandoned = 0 });
        var processSpans = stopped.Where(s => s.Kind == ActivityKind.Consumer).ToList();
        processSpans.Should().HaveCount(3).And.OnlyContain(s => s.ParentSpanId == default(ActivitySpanId) && !s.Links.Any());
    }

    [Fact]
    public void ReceiveSpanOfABatch_LinksEveryProducer()
    {
        const string name = "batch-links-pump";
        var stopped = ListenToPump(name, out var listener);
        using var _ = listener;
        var producers = Enumerable.Range(0, 2).Select(i => new Activity($"send {i}").SetIdFormat(ActivityIdFormat.W3C).Start()).ToList();
        producers.ForEach(p => p.Stop());

        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send(new byte[] { 0 }, "first"); // the first receive asks for one message; the next asks for two
        foreach (var producer in producers)
        {
            queue.Send(new byte[] { 1 }, producer.DisplayName, new Dictionary<string, string>(MessagePumpDiagnostics.InjectTraceContext(new Dictionary<string, string>(), producer)));
        }

        RunToCompletion(clock, queue, 3, name);

        var pair = stopped.Where(s => s.Kind == ActivityKind.Client).Should()
            .ContainSingle(s => (int)s.GetTagItem(MessagePumpDiagnostics.BatchMessageCountTag)! == 2, "the two traced messages came in one receive").Subject;
        pair.Links.Select(l => l.Context.SpanId).Should().BeEquivalentTo(producers.Select(p => p.SpanId), "one link per producer of the batch");
    }

    [Fact]
    public void SourceWithoutNames_SpansAreNamedByTheOperation_SystemUnknown_NoDestination()
    {
        const string name = "unnamed-source-pump";
        var stopped = ListenToPump(name, out var listener);
        using var _ = listener;
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send(new byte[] { 1 }, "m1");

        RunToCompletion(clock, new BlankNamesSource(queue), queue, 1, name);

        stopped.Select(s => s.DisplayName).Should().BeEquivalentTo(["receive", "process"]);
        stopped.Should().OnlyContain(s => (string?)s.GetTagItem(MessagePumpDiagnostics.MessagingSystemTag) == MessagePumpDiagnostics.UnknownSystem
            && s.GetTagItem(MessagePumpDiagnostics.DestinationNameTag) == null);
    }

    [Fact]
    public void AnActivityCurrentAtStart_IsNeverCurrentInTheHandler_WhateverListensToThePump()
    {
        using var hostSource = new ActivitySource("PriorityAsync.MessagePump.Tests.Host");
        using var hostListener = new ActivityListener
        {
            ShouldListenTo = source => source == hostSource,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
        };
        ActivitySource.AddActivityListener(hostListener);
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send(new byte[] { 1 }, "m1");
        Activity? seen = null;
        ActivityTraceId hostTrace = default;

        VirtualRun.Run(clock, async scheduler =>
        {
            await using var pump = new PriorityMessagePump(
                queue,
                (_, _) =>
                {
                    seen = Activity.Current;
                    return Task.CompletedTask;
                },
                scheduler,
                new MessagePumpOptions { Name = "ambient-activity-pump" });
            using (var host = hostSource.StartActivity("host start"))
            {
                host.Should().NotBeNull();
                hostTrace = host!.TraceId;
                await pump.StartAsync();
            }

            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1, scheduler.TimeProvider, TimeSpan.FromHours(1));
        });

        // Other tests may listen to the pump's spans meanwhile: then the handler runs in its own root process span.
        if (seen is not null)
        {
            seen.Source.Name.Should().Be(MessagePumpDiagnostics.ActivitySourceName);
            seen.TraceId.Should().NotBe(hostTrace, "the activity current at start is no message's parent");
        }
    }

    private static ConcurrentBag<Activity> ListenToPump(string pump, out ActivityListener listener)
    {
        var stopped = new ConcurrentBag<Activity>();
        listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == MessagePumpDiagnostics.ActivitySourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = activity =>
            {
                if ((string?)activity.GetTagItem(MessagePumpDiagnostics.PumpTag) == pump)
                {
                    stopped.Add(activity);
                }
            },
        };
        ActivitySource.AddActivityListener(listener);
        return stopped;
    }

    private static void RunToCompletion(VirtualTimeProvider clock, InMemoryQueue queue, int messages, string name) =>
        RunToCompletion(clock, queue, queue, messages, name);

    private static void RunToCompletion(VirtualTimeProvider clock, IMessageSource source, InMemoryQueue queue, int messages, string name) =>
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var pump = new PriorityMessagePump(source, (_, _) => Task.CompletedTask, scheduler, new MessagePumpOptions { Name = name });
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, scheduler.TimeProvider, TimeSpan.FromHours(1));
        });

    [Fact]
    public void InjectTraceContext_NullHeaders_ThrowNamingThem()
    {
        var inject = () => MessagePumpDiagnostics.InjectTraceContext(null!);

        inject.Should().Throw<ArgumentNullException>().WithParameterName("headers");
    }

    [Fact]
    public void InjectTraceContext_WithAnActivityGiven_InjectsThatOne_NotTheCurrent()
    {
        using var current = new Activity("current").SetIdFormat(ActivityIdFormat.W3C).Start();
        using var producer = new Activity("producer").SetIdFormat(ActivityIdFormat.W3C);
        producer.SetParentId(ActivityTraceId.CreateRandom(), ActivitySpanId.CreateRandom());
        producer.Start();
        Activity.Current = current;

        var headers = MessagePumpDiagnostics.InjectTraceContext(new Dictionary<string, string>(), producer);

        headers["traceparent"].Should().Be(producer.Id);
        headers["traceparent"].Should().NotContain(current.TraceId.ToHexString());
    }

    [Fact]
    public void InjectTraceContext_WithoutAnActivity_LeavesTheHeadersAlone()
    {
        var previous = Activity.Current;
        Activity.Current = null;
        try
        {
            MessagePumpDiagnostics.InjectTraceContext(new Dictionary<string, string> { ["k"] = "v" }).Should().Equal(new Dictionary<string, string> { ["k"] = "v" });
        }
        finally
        {
            Activity.Current = previous;
        }
    }

    /// <summary>An adapter that names neither its messaging system nor its queue (blank names count as none).</summary>
    private sealed class BlankNamesSource(InMemoryQueue queue) : IMessageSource
    {
        public TimeSpan? LockDuration => queue.LockDuration;

        public string MessagingSystem => " ";

        public string? DestinationName => "";

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) => queue.ReceiveAsync(cancellationToken);
    }

    /// <summary>An adapter whose messages' <see cref="ILeasedMessage.Headers"/> throw.</summary>
    private sealed class ThrowingHeadersSource(InMemoryQueue queue) : IMessageSource
    {
        public TimeSpan? LockDuration => queue.LockDuration;

        public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            await queue.ReceiveAsync(cancellationToken) is { } message ? new ThrowingHeadersMessage(message) : null;
    }

    private sealed class ThrowingHeadersMessage(ILeasedMessage inner) : ILeasedMessage
    {
        public string MessageId => inner.MessageId;

        public ReadOnlyMemory<byte> Body => inner.Body;

        public IReadOnlyDictionary<string, string> Headers => throw new InvalidOperationException("broken adapter");

        public int DeliveryCount => inner.DeliveryCount;

        public DateTimeOffset LockedUntil => inner.LockedUntil;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => inner.RenewLockAsync(cancellationToken);

        public Task CompleteAsync(CancellationToken cancellationToken = default) => inner.CompleteAsync(cancellationToken);

        public Task AbandonAsync(CancellationToken cancellationToken = default) => inner.AbandonAsync(cancellationToken);

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => inner.DeadLetterAsync(reason, cancellationToken);
    }
}
