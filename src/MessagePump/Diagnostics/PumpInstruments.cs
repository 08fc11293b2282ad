using System.Diagnostics.Metrics;

namespace PriorityAsync.MessagePump;

/// <summary>The instruments of one <c>PriorityAsync.MessagePump</c> meter: the shared static one, or one a factory made.</summary>
internal sealed class PumpInstruments
{
    private static readonly string? Version = typeof(PumpInstruments).Assembly.GetName().Version?.ToString();

    private static readonly Lazy<PumpInstruments> SharedInstance = new(() => new PumpInstruments(new Meter(Options())));

    private PumpInstruments(Meter meter)
    {
        Meter = meter;
        Consumed = meter.CreateCounter<long>(MessagePumpMetrics.ConsumedMessagesName, "{message}", "Messages received.");
        ProcessDuration = meter.CreateHistogram<double>(MessagePumpMetrics.ProcessDurationName, "s", "Duration of the message handler.");
        Completed = meter.CreateCounter<long>(MessagePumpMetrics.CompletedMessagesName, "{message}", "Messages completed.");
        Abandoned = meter.CreateCounter<long>(MessagePumpMetrics.AbandonedMessagesName, "{message}", "Messages abandoned.");
        DeadLettered = meter.CreateCounter<long>(MessagePumpMetrics.DeadLetteredMessagesName, "{message}", "Messages dead-lettered by handlers.");
        Deferred = meter.CreateCounter<long>(MessagePumpMetrics.DeferredMessagesName, "{message}", "Messages deferred by handlers.");
        LeasesLost = meter.CreateCounter<long>(MessagePumpMetrics.LeasesLostName, "{lease}", "Leases lost.");
        Renewals = meter.CreateCounter<long>(MessagePumpMetrics.RenewalsName, "{renewal}", "Lease renewals.");
        LeaseSlack = meter.CreateHistogram<double>(MessagePumpMetrics.LeaseSlackName, "s", "Lock time left when a renewal was sent.");
        RenewDuration = meter.CreateHistogram<double>(MessagePumpMetrics.RenewDurationName, "s", "Round trip of a lease renewal.");
        HandOffHeadroom = meter.CreateHistogram<double>(MessagePumpMetrics.HandOffHeadroomName, "s", "Lock time left when a message reached its handler.");
        InFlight = meter.CreateUpDownCounter<long>(MessagePumpMetrics.InFlightName, "{message}", "Messages in flight.");
    }

    public Meter Meter { get; }

    public Counter<long> Consumed { get; }

    public Histogram<double> ProcessDuration { get; }

    public Counter<long> Completed { get; }

    public Counter<long> Abandoned { get; }

    public Counter<long> DeadLettered { get; }

    public Counter<long> Deferred { get; }

    public Counter<long> LeasesLost { get; }

    public Counter<long> Renewals { get; }

    public Histogram<double> LeaseSlack { get; }

    public Histogram<double> RenewDuration { get; }

    public Histogram<double> HandOffHeadroom { get; }

    public UpDownCounter<long> InFlight { get; }

    /// <summary>
    /// The instruments of <paramref name="factory"/>'s meter (the factory owns and disposes it, and returns the same
    /// meter to every pump that asks), or of the shared static meter when <paramref name="factory"/> is null.
    /// </summary>
    public static PumpInstruments For(IMeterFactory? factory) =>
        factory is null ? SharedInstance.Value : new PumpInstruments(factory.Create(Options()));

    private static MeterOptions Options() => new(MessagePumpDiagnostics.MeterName) { Version = Version };
}
