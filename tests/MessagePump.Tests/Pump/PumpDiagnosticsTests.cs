using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>The PriorityAsync.MessagePump meter and the log event ids.</summary>
public class PumpDiagnosticsTests
{
    [Fact]
    public void Metrics_And_Logs_MatchTheAccounting()
    {
        const string name = "diagnostics-test-pump";
        var measurements = new ConcurrentBag<(string Instrument, double Value, string? ErrorType)>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == MessagePumpDiagnostics.MeterName)
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        void Record(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
        {
            string? pump = null;
            string? error = null;
            foreach (var tag in tags)
            {
                pump = tag.Key == MessagePumpDiagnostics.PumpTag ? (string?)tag.Value : pump;
                error = tag.Key == MessagePumpDiagnostics.ErrorTypeTag ? (string?)tag.Value : error;
            }

            if (pump == name)
            {
                measurements.Add((instrument.Name, value, error));
            }
        }

        listener.SetMeasurementEventCallback<long>((i, v, t, _) => Record(i, v, t));
        listener.SetMeasurementEventCallback<double>((i, v, t, _) => Record(i, v, t));
        listener.Start();

        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        for (var i = 0; i < 4; i++)
        {
            queue.Send(new byte[] { (byte)i }, $"m{i}");
        }

        var logger = new ListLogger();
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var pump = new PriorityMessagePump(
                queue,
                async (context, cancellationToken) =>
                {
                    await Task.Delay(TimeSpan.FromSeconds(15), context.TimeProvider, cancellationToken);
                    if (context.Message.MessageId == "m0" && context.Message.DeliveryCount == 1)
                    {
                        throw new InvalidOperationException("first delivery fails");
                    }
                },
                scheduler,
                new MessagePumpOptions { Name = name },
                logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 4, scheduler.TimeProvider, TimeSpan.FromHours(1));
        });

        double Sum(string instrument) => measurements.Where(m => m.Instrument == instrument).Sum(m => m.Value);
        int Count(string instrument) => measurements.Count(m => m.Instrument == instrument);
        var broker = queue.GetStatistics();
        Sum(MessagePumpMetrics.ConsumedMessagesName).Should().Be(5);
        Sum(MessagePumpMetrics.CompletedMessagesName).Should().Be(4);
        Sum(MessagePumpMetrics.AbandonedMessagesName).Should().Be(1);
        Sum(MessagePumpMetrics.LeasesLostName).Should().Be(0);
        Sum(MessagePumpMetrics.RenewalsName).Should().Be(broker.Renewals).And.BePositive();
        Sum(MessagePumpMetrics.InFlightName).Should().Be(0);
        Count(MessagePumpMetrics.ProcessDurationName).Should().Be(5);
        measurements.Where(m => m.Instrument == MessagePumpMetrics.ProcessDurationName).Should().OnlyContain(m => m.Value == 15);
        measurements.Count(m => m.ErrorType == typeof(InvalidOperationException).FullName).Should().Be(1);
        measurements.Where(m => m.Instrument == MessagePumpMetrics.LeaseSlackName).Should().OnlyContain(m => m.Value == 5, "renewal at min(half of 10 s, 10 s) before expiry");

        var ids = logger.Entries.Select(e => e.EventId.Id).ToList();
        ids.Should().Contain([1, 2, 3, 10, 11, 12, 13, 20]);
        ids.Count(id => id == 10).Should().Be(5);
        logger.Entries.Single(e => e.EventId.Id == 12).Should().Match<(EventId, LogLevel Level, string, Exception? Exception)>(e => e.Level == LogLevel.Warning && e.Exception is InvalidOperationException);
    }
}
