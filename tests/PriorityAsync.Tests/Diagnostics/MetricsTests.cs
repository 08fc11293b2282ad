using System.Collections.Concurrent;
using System.Diagnostics.Metrics;

namespace PriorityAsync.Tests.Diagnostics;

public class MetricsTests
{
    [Fact]
    public void Meter_ReportsPerLaneDispatches_QueueLength_WaitAndSliceDurations()
    {
        var name = $"metrics-{Guid.NewGuid():N}";
        var clock = new VirtualTimeProvider();
        using var collector = new MeasurementCollector(name);

        PriorityAsyncContext.Run(async () =>
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

        PriorityAsyncContext.Run(async () =>
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
        var name = $"stalls-{Guid.NewGuid():N}";
        var clock = new VirtualTimeProvider();
        var stalls = new List<(string Lane, TimeSpan Duration)>();
        using var collector = new MeasurementCollector(name);
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = name, TimeProvider = clock, StallThreshold = TimeSpan.FromMilliseconds(100) });
        context.StallDetected += (_, e) => stalls.Add((e.Lane.Name, e.Duration));

        context.Execute(async () =>
        {
            await context.GetLane(LanePriority.Processing).Run(() => clock.Advance(TimeSpan.FromMilliseconds(99)));
            await context.GetLane(LanePriority.Processing).Run(() => clock.Advance(TimeSpan.FromMilliseconds(250)));
        });

        stalls.Should().Equal(("Processing", TimeSpan.FromMilliseconds(250)));
        collector.Sum("priorityasync.lane.stalls", "Processing").Should().Be(1);
    }

    /// <summary>Collects the PriorityAsync meter's measurements of one scheduler.</summary>
    private sealed class MeasurementCollector : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly ConcurrentQueue<(string Instrument, string Lane, double Value)> _measurements = new();

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
                foreach (var tag in tags)
                {
                    scheduler = tag.Key == PriorityAsyncMetrics.SchedulerTag ? (string?)tag.Value : scheduler;
                    lane = tag.Key == PriorityAsyncMetrics.LaneTag ? (string?)tag.Value : lane;
                }

                if (scheduler == schedulerName)
                {
                    _measurements.Enqueue((instrument.Name, lane!, value));
                }
            }
        }

        /// <summary>Collects the observable instruments (queue length, dispatched) once.</summary>
        public void Observe() => _listener.RecordObservableInstruments();

        public double Sum(string instrument, string lane) => Values(instrument, lane).Sum();

        public IEnumerable<double> Values(string instrument, string lane) =>
            _measurements.Where(m => m.Instrument == instrument && m.Lane == lane).Select(m => Math.Round(m.Value, 6)).ToList();

        public void Dispose() => _listener.Dispose();
    }
}
