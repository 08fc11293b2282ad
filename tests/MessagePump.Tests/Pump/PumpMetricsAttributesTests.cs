using System.Collections.Concurrent;
using System.Diagnostics.Metrics;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>The OpenTelemetry messaging attributes on the pump's instruments, and meters made by an <see cref="IMeterFactory"/>.</summary>
public class PumpMetricsAttributesTests
{
    [Fact]
    public void Names_AreNamespacedByPackage()
    {
        MessagePumpDiagnostics.MeterName.Should().Be("PriorityAsync.MessagePump");
        MessagePumpDiagnostics.ActivitySourceName.Should().Be("PriorityAsync.MessagePump");
        PriorityAsyncMetrics.MeterName.Should().Be("PriorityAsync");
    }

    [Fact]
    public void MessagingInstruments_CarryTheConventionAttributes()
    {
        const string name = "attributes-test-pump";
        var measurements = Listen(instrument => instrument.Meter.Name == MessagePumpDiagnostics.MeterName, name, out var listener);
        using (listener)
        {
            RunPump(name, meterFactory: null, failFirst: true);
        }

        var consumed = measurements.Where(m => m.Instrument == MessagePumpMetrics.ConsumedMessagesName).ToList();
        consumed.Should().HaveCount(3);
        consumed.Should().OnlyContain(m => Is(m, MessagePumpDiagnostics.OperationNameTag, "receive")
            && Is(m, MessagePumpDiagnostics.MessagingSystemTag, InMemoryQueue.MessagingSystemName)
            && Is(m, MessagePumpDiagnostics.DestinationNameTag, "orders")
            && Is(m, MessagePumpDiagnostics.PumpTag, name)
            && !m.Tags.ContainsKey(MessagePumpDiagnostics.ErrorTypeTag));

        var process = measurements.Where(m => m.Instrument == MessagePumpMetrics.ProcessDurationName).ToList();
        process.Should().HaveCount(3);
        process.Should().OnlyContain(m => Is(m, MessagePumpDiagnostics.OperationNameTag, "process")
            && Is(m, MessagePumpDiagnostics.MessagingSystemTag, InMemoryQueue.MessagingSystemName)
            && Is(m, MessagePumpDiagnostics.DestinationNameTag, "orders"));
        process.Count(m => Is(m, MessagePumpDiagnostics.ErrorTypeTag, typeof(InvalidOperationException).FullName!)).Should().Be(1);

        measurements.Where(m => m.Instrument == MessagePumpMetrics.CompletedMessagesName).Should().HaveCount(2)
            .And.OnlyContain(m => Is(m, MessagePumpDiagnostics.OperationNameTag, "complete"));
        measurements.Where(m => m.Instrument == MessagePumpMetrics.AbandonedMessagesName).Should().ContainSingle()
            .Which.Tags[MessagePumpDiagnostics.OperationNameTag].Should().Be("abandon");
        measurements.Should().OnlyContain(m => Is(m, MessagePumpDiagnostics.MessagingSystemTag, InMemoryQueue.MessagingSystemName)
            && Is(m, MessagePumpDiagnostics.DestinationNameTag, "orders"));
    }

    [Fact]
    public void EachRenewal_RecordsItsRoundTrip_AndTheLockLeftWhenSent()
    {
        const string name = "renewal-metrics-pump";
        var measurements = Listen(instrument => instrument.Meter.Name == MessagePumpDiagnostics.MeterName, name, out var listener);
        var clock = new VirtualTimeProvider();
        var latency = TimeSpan.FromMilliseconds(100);
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10), Latency = latency });
        queue.Send(new byte[] { 1 }, "slow");
        using (listener)
        {
            VirtualRun.Run(clock, async scheduler =>
            {
                await using var pump = new PriorityMessagePump(
                    queue,
                    (context, cancellationToken) => Task.Delay(TimeSpan.FromSeconds(25), context.TimeProvider, cancellationToken),
                    scheduler,
                    new MessagePumpOptions { Name = name });
                await pump.StartAsync();
                await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1, scheduler.TimeProvider, TimeSpan.FromHours(1));
            });
        }

        var renewals = queue.GetStatistics().Renewals;
        renewals.Should().BeGreaterThanOrEqualTo(2, "a 25 s handler on a 10 s lock");
        measurements.Where(m => m.Instrument == MessagePumpMetrics.RenewalsName).Should().HaveCount((int)renewals);
        measurements.Where(m => m.Instrument == MessagePumpMetrics.RenewDurationName).Should().HaveCount((int)renewals)
            .And.OnlyContain(m => Math.Abs(m.Value - latency.TotalSeconds) < 1e-6, "the broker answers every renewal after its latency");
        measurements.Where(m => m.Instrument == MessagePumpMetrics.LeaseSlackName).Should().HaveCount((int)renewals)
            .And.OnlyContain(m => m.Value > 0 && m.Value < 10, "each renewal is sent while the lock still runs");
        measurements.Where(m => m.Instrument is MessagePumpMetrics.RenewDurationName or MessagePumpMetrics.LeaseSlackName)
            .Should().OnlyContain(m => Is(m, MessagePumpDiagnostics.DestinationNameTag, "orders"));
    }

    [Fact]
    public void Source_WithoutNames_IsTaggedUnknown_AndHasNoDestination()
    {
        IMessageSource source = new UnnamedSource();
        source.MessagingSystem.Should().Be(MessagePumpDiagnostics.UnknownSystem);
        source.DestinationName.Should().BeNull();
    }

    [Fact]
    public void MeterFactory_CreatesThePumpsMeter()
    {
        const string name = "factory-test-pump";
        using var factory = new TestMeterFactory();
        var fromFactory = Listen(instrument => instrument.Meter.Scope == factory, name, out var listener);
        var fromStatic = Listen(instrument => instrument.Meter.Name == MessagePumpDiagnostics.MeterName && instrument.Meter.Scope is null, name, out var staticListener);
        using (listener)
        using (staticListener)
        {
            RunPump(name, factory, failFirst: false);
        }

        factory.Created.Should().ContainSingle().Which.Should().Match<MeterOptions>(o => o.Name == MessagePumpDiagnostics.MeterName);
        fromFactory.Where(m => m.Instrument == MessagePumpMetrics.ConsumedMessagesName).Should().HaveCount(2);
        fromFactory.Where(m => m.Instrument == MessagePumpMetrics.CompletedMessagesName).Should().HaveCount(2);
        fromStatic.Should().BeEmpty("a pump with a factory measures only on the factory's meter");
    }

    /// <summary>The instruments table of docs/message-pump.md ("Metrics") lists every instrument with its type and unit.</summary>
    [Fact]
    public void TheMetricsTable_ListsEveryInstrument_WithItsTypeAndUnit()
    {
        using var factory = new TestMeterFactory();
        var published = new List<Instrument>();
        using (var listener = new MeterListener())
        {
            listener.InstrumentPublished = (instrument, _) =>
            {
                if (instrument.Meter.Scope == factory)
                {
                    published.Add(instrument);
                }
            };
            listener.Start();
            VirtualRun.Run(new VirtualTimeProvider(), scheduler =>
            {
                _ = new PriorityMessagePump(new InMemoryTransport().CreateQueue("q"), (_, _) => Task.CompletedTask, scheduler, new MessagePumpOptions { MeterFactory = factory });
                return Task.CompletedTask;
            });
        }

        static string TypeOf(Instrument i) => i switch
        {
            Counter<long> => "counter",
            UpDownCounter<long> => "up-down counter",
            Histogram<double> => "histogram",
            _ => i.GetType().Name,
        };
        published.Select(i => $"{i.Name} | {TypeOf(i)} | {i.Unit}").Should().BeEquivalentTo(DocumentedInstruments());
        published.Should().OnlyContain(i => !string.IsNullOrWhiteSpace(i.Description), "every instrument describes itself to exporters");
        published.Select(i => i.Meter.Version).Distinct().Should().Equal(typeof(PriorityMessagePump).Assembly.GetName().Version!.ToString());
    }

    /// <summary>The rows of the instruments table as <c>name | type | unit</c>.</summary>
    private static List<string> DocumentedInstruments()
    {
        var doc = File.ReadAllText(Path.Combine(RepositoryRoot.Find(), "docs", "message-pump.md")).Replace("\r\n", "\n", StringComparison.Ordinal);
        var section = doc[doc.IndexOf("\n## Metrics\n", StringComparison.Ordinal)..];
        section = section[..section.IndexOf("\n\n", section.IndexOf("| instrument |", StringComparison.Ordinal), StringComparison.Ordinal)];
        return [.. section.Split('\n')
            .Where(line => line.StartsWith("| `", StringComparison.Ordinal))
            .Select(line => line.Split('|', StringSplitOptions.TrimEntries))
            .Select(cells => $"{cells[1].Trim('`')} | {cells[2]} | {cells[3].Trim('`')}")];
    }

    private static bool Is(Measured m, string tag, string value) => m.Tags.TryGetValue(tag, out var v) && (string?)v == value;

    private static ConcurrentBag<Measured> Listen(Func<Instrument, bool> filter, string pump, out MeterListener listener)
    {
        var measurements = new ConcurrentBag<Measured>();
        listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (filter(instrument))
                {
                    l.EnableMeasurementEvents(instrument);
                }
            },
        };
        void Record(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
        {
            var copy = new Dictionary<string, object?>();
            foreach (var tag in tags)
            {
                copy[tag.Key] = tag.Value;
            }

            if (copy.TryGetValue(MessagePumpDiagnostics.PumpTag, out var p) && (string?)p == pump)
            {
                measurements.Add(new Measured(instrument.Name, value, copy));
            }
        }

        listener.SetMeasurementEventCallback<long>((i, v, t, _) => Record(i, v, t));
        listener.SetMeasurementEventCallback<double>((i, v, t, _) => Record(i, v, t));
        listener.Start();
        return measurements;
    }

    /// <summary>Two messages; with <paramref name="failFirst"/> the first delivery of the first fails and is redelivered.</summary>
    private static void RunPump(string name, IMeterFactory? meterFactory, bool failFirst)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send(new byte[] { 1 }, "m0");
        queue.Send(new byte[] { 2 }, "m1");
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var pump = new PriorityMessagePump(
                queue,
                async (context, cancellationToken) =>
                {
                    await Task.Delay(TimeSpan.FromSeconds(1), context.TimeProvider, cancellationToken);
                    if (failFirst && context.Message.MessageId == "m0" && context.Message.DeliveryCount == 1)
                    {
                        throw new InvalidOperationException("first delivery fails");
                    }
                },
                scheduler,
                new MessagePumpOptions { Name = name, MeterFactory = meterFactory });
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 2, scheduler.TimeProvider, TimeSpan.FromHours(1));
        });
    }

    private sealed record Measured(string Instrument, double Value, Dictionary<string, object?> Tags);

    private sealed class TestMeterFactory : IMeterFactory
    {
        private readonly List<Meter> _meters = [];

        public List<MeterOptions> Created { get; } = [];

        public Meter Create(MeterOptions options)
        {
            Created.Add(options);
            options.Scope = this;
            var meter = new Meter(options);
            _meters.Add(meter);
            return meter;
        }

        public void Dispose()
        {
            foreach (var meter in _meters)
            {
                meter.Dispose();
            }
        }
    }

    private sealed class UnnamedSource : IMessageSource
    {
        public TimeSpan? LockDuration => null;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) => Task.FromResult<ILeasedMessage?>(null);
    }
}
