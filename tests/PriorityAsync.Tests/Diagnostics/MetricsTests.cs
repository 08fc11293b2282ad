using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Diagnostics;

public class MetricsTests
{
    [Fact]
    public void Meter_ReportsPerLaneDispatches_QueueLength_WaitAndSliceDurations()
    {
        var name = $"metrics-{Guid.NewGuid():N}";
        var clock = new VirtualTimeProvider();
        using var collector = new MeasurementCollector(name);

        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            var processing = scheduler.GetLane(LanePriority.Processing).Run(() => clock.Advance(TimeSpan.FromMilliseconds(30)));
            var receive = scheduler.GetLane(LanePriority.Receive).Run(() => { });
            await Task.WhenAll(processing, receive);
            collector.Observe(); // while the context lives: a disposed scheduler is no longer published
        }, new PrioritySchedulerOptions { Name = name, TimeProvider = clock });

        collector.Values("priorityasync.lane.dispatched", "Processing").Should().Equal(1);
        collector.Values("priorityasync.lane.dispatched", "Receive").Should().Equal(1);
        collector.Values("priorityasync.lane.queue.length", "Receive").Should().Equal([0.0], "every item queued was taken");
        collector.Values("priorityasync.lane.slice.duration", "Processing").Should().Contain(0.03);
        collector.Values("priorityasync.lane.wait.duration", "Receive").Should().Contain(0.03, "the receive item waited behind the 30 ms processing slice");
    }

    [Fact]
    public void QueueLength_IsObservedFromTheLanes_WhileWorkWaits()
    {
        var name = $"queue-{Guid.NewGuid():N}";
        using var collector = new MeasurementCollector(name);
        var observedWhileWaiting = new List<double>();

        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            for (var i = 0; i < 3; i++)
            {
                scheduler.GetLane(LanePriority.Receive).SynchronizationContext.Post(_ => { }, null);
            }

            collector.Observe();
            observedWhileWaiting.AddRange(collector.Values("priorityasync.lane.queue.length", "Receive"));
            await PriorityScheduler.YieldTo(LanePriority.Receive);
        }, new PrioritySchedulerOptions { Name = name });

        observedWhileWaiting.Should().Equal(3);
    }

    [Fact]
    public void StallDetector_ReportsTheSliceAndItsLane_AsAnEventAndAMetric()
    {
        var clock = new VirtualTimeProvider();
        AssertOneStallOf250MsReportedAndCountedOnce($"stalls-{Guid.NewGuid():N}", clock, clock.Advance);
    }

    /// <summary>
    /// A stall the watchdog did not report while it ran (its timer was late: a starved timer thread, here a clock whose
    /// timers never fire) is still counted, once, when the slice ends.
    /// </summary>
    [Fact]
    public void AStallTheWatchdogMissed_IsCountedWhenTheSliceEnds()
    {
        var clock = new FrozenTimersClock();
        AssertOneStallOf250MsReportedAndCountedOnce($"missed-stall-{Guid.NewGuid():N}", clock, clock.Advance);
    }

    /// <summary>Runs a 99 ms slice (under the 100 ms threshold) and a 250 ms one; only the second is a stall, reported and counted once.</summary>
    private static void AssertOneStallOf250MsReportedAndCountedOnce(string name, TimeProvider clock, Action<TimeSpan> advance)
    {
        var stalls = new List<(string Lane, TimeSpan Duration)>();
        using var collector = new MeasurementCollector(name);
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = name, TimeProvider = clock, StallThreshold = TimeSpan.FromMilliseconds(100) });
        context.StallDetected += (_, e) => stalls.Add((e.Lane.Name, e.Duration));

        context.Execute(async () =>
        {
            await context.GetLane(LanePriority.Processing).Run(() => advance(TimeSpan.FromMilliseconds(99)));
            await context.GetLane(LanePriority.Processing).Run(() => advance(TimeSpan.FromMilliseconds(250)));
        });

        stalls.Should().Equal(("Processing", TimeSpan.FromMilliseconds(250)));
        collector.Sum("priorityasync.lane.stalls", "Processing").Should().Be(1);
    }

    [Fact]
    public void RejectedWork_IsCountedPerLane_TaggedWithItsKind()
    {
        var name = $"rejected-{Guid.NewGuid():N}";
        var clock = new VirtualTimeProvider();
        using var collector = new MeasurementCollector(name);
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = name, TimeProvider = clock });
        using var timer = context.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);
        context.Execute(() => Task.CompletedTask);
        var lane = context.GetLane(LanePriority.Processing);

        lane.SynchronizationContext.Post(_ => { }, null);
        lane.SwitchTo().GetAwaiter().UnsafeOnCompleted(() => { });
        _ = lane.TaskFactory.StartNew(() => { });
        clock.Advance(TimeSpan.FromSeconds(1));

        collector.Kinds("priorityasync.lane.rejected", "Processing").Should().Equal("post", "continuation", "task");
        collector.Kinds("priorityasync.lane.rejected", "Lease").Should().Equal("timer");
        collector.Sum("priorityasync.lane.rejected", "Processing").Should().Be(3);
    }

    [Fact]
    public void EveryLiveScheduler_IsObserved_WhileOthersComeAndGo()
    {
        var prefix = $"live-{Guid.NewGuid():N}";
        using var first = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = $"{prefix}-first" });
        using var second = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = $"{prefix}-second" });
        var third = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = $"{prefix}-third" });
        third.Dispose();
        using var fourth = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = $"{prefix}-fourth" });
        var observed = new ConcurrentBag<string>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Name == "priorityasync.lane.queue.length")
                {
                    l.EnableMeasurementEvents(instrument);
                }
            },
        };
        listener.SetMeasurementEventCallback<long>((_, _, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == PriorityAsyncMetrics.SchedulerTag && tag.Value is string scheduler && scheduler.StartsWith(prefix, StringComparison.Ordinal))
                {
                    observed.Add(scheduler);
                }
            }
        });
        listener.Start();

        listener.RecordObservableInstruments();

        observed.Distinct().Order().Should().Equal($"{prefix}-first", $"{prefix}-fourth", $"{prefix}-second");
        observed.Should().HaveCount(9, "three lanes each of the three live schedulers");
    }

    [Fact]
    public void AFinishedScheduler_IsNoLongerObserved()
    {
        var name = $"finished-{Guid.NewGuid():N}";
        using var collector = new MeasurementCollector(name);
        var context = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = name });
        context.Execute(() => Task.CompletedTask);
        collector.Observe();
        collector.Values("priorityasync.lane.dispatched", "Lease").Should().Equal(1);

        context.Dispose();
        collector.Observe();

        collector.Values("priorityasync.lane.dispatched", "Lease").Should().Equal([1.0], "a disposed scheduler is not observed any more");
    }

    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads)]
    [InlineData(PriorityWorkerMode.ThreadPool)]
    public async Task AStoppedTaskScheduler_IsNoLongerObserved(PriorityWorkerMode mode)
    {
        var name = $"stopped-{Guid.NewGuid():N}";
        using var collector = new MeasurementCollector(name);
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { Name = name, WorkerCount = 1, Mode = mode });
        await scheduler.GetLane(LanePriority.Processing).Run(() => { }).WaitAsync(Bounded.Generous);
        collector.Observe();
        collector.Values("priorityasync.lane.dispatched", "Processing").Should().Equal(1);

        scheduler.Complete();
        await scheduler.Completion.WaitAsync(Bounded.Generous);
        collector.Observe();

        collector.Values("priorityasync.lane.dispatched", "Processing").Should().Equal([1.0], "a stopped scheduler is not observed any more");
    }

    [Fact]
    public void Instruments_ArePublishedWithTheirUnits_ADescription_AndTheLibrarysVersion()
    {
        using var context = new PriorityAsyncContext(); // the instruments exist once a scheduler does
        var published = new ConcurrentDictionary<string, (string? Unit, string? Description, string? Version)>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, _) =>
            {
                if (instrument.Meter.Name == PriorityAsyncMetrics.MeterName)
                {
                    published[instrument.Name] = (instrument.Unit, instrument.Description, instrument.Meter.Version);
                }
            },
        };
        listener.Start();

        published.ToDictionary(p => p.Key, p => p.Value.Unit).Should().BeEquivalentTo(new Dictionary<string, string?>
        {
            ["priorityasync.lane.queue.length"] = "{item}",
            ["priorityasync.lane.dispatched"] = "{item}",
            ["priorityasync.lane.wait.duration"] = "s",
            ["priorityasync.lane.slice.duration"] = "s",
            ["priorityasync.lane.stalls"] = "{stall}",
            ["priorityasync.lane.rejected"] = "{item}",
        });
        published.Values.Should().OnlyContain(p => !string.IsNullOrWhiteSpace(p.Description), "dashboards show the description");
        published.Values.Select(p => p.Version).Distinct().Should().Equal(typeof(PriorityAsyncMetrics).Assembly.GetName().Version!.ToString());
    }

    /// <summary>Collects the PriorityAsync meter's measurements of one scheduler.</summary>
    private sealed class MeasurementCollector : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly ConcurrentQueue<(string Instrument, string Lane, string? Kind, double Value)> _measurements = new();

        public MeasurementCollector(string schedulerName)
        {
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == PriorityAsyncMetrics.MeterName)
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((i, v, tags, _) => Record(i, v, tags));
            _listener.SetMeasurementEventCallback<double>((i, v, tags, _) => Record(i, v, tags));
            _listener.Start();

            void Record(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
            {
                string? scheduler = null;
                string? lane = null;
                string? kind = null;
                foreach (var tag in tags)
                {
                    scheduler = tag.Key == PriorityAsyncMetrics.SchedulerTag ? (string?)tag.Value : scheduler;
                    lane = tag.Key == PriorityAsyncMetrics.LaneTag ? (string?)tag.Value : lane;
                    kind = tag.Key == PriorityAsyncMetrics.KindTag ? (string?)tag.Value : kind;
                }

                if (scheduler == schedulerName)
                {
                    _measurements.Enqueue((instrument.Name, lane!, kind, value));
                }
            }
        }

        /// <summary>Collects the observable instruments (queue length, dispatched) once.</summary>
        public void Observe() => _listener.RecordObservableInstruments();

        public double Sum(string instrument, string lane) => Values(instrument, lane).Sum();

        public IEnumerable<double> Values(string instrument, string lane) =>
            _measurements.Where(m => m.Instrument == instrument && m.Lane == lane).Select(m => Math.Round(m.Value, 6)).ToList();

        /// <summary>The work kinds the rejected-work counter reported for <paramref name="lane"/>, in order.</summary>
        public IEnumerable<string?> Kinds(string instrument, string lane) =>
            _measurements.Where(m => m.Instrument == instrument && m.Lane == lane).Select(m => m.Kind).ToList();

        public void Dispose() => _listener.Dispose();
    }

    /// <summary>A clock that moves only when told to, and whose timers never fire.</summary>
    private sealed class FrozenTimersClock : TimeProvider
    {
        private long _ticks;

        public override long TimestampFrequency => TimeSpan.TicksPerSecond;

        public override long GetTimestamp() => Volatile.Read(ref _ticks);

        public void Advance(TimeSpan delta) => Interlocked.Add(ref _ticks, delta.Ticks);

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period) => new NeverFires();

        private sealed class NeverFires : ITimer
        {
            public bool Change(TimeSpan dueTime, TimeSpan period) => true;

            public void Dispose()
            {
            }

            public ValueTask DisposeAsync() => ValueTask.CompletedTask;
        }
    }
}
