namespace LeaseSimulation.Tracking;

/// <summary>One line of the monitor: the counters at a scenario time.</summary>
/// <param name="Seconds">The scenario time, in seconds.</param>
/// <param name="Received">Messages received so far.</param>
/// <param name="InFlight">Messages received and not finished.</param>
/// <param name="Done">Messages completed.</param>
/// <param name="Lost">Messages whose lease expired.</param>
public readonly record struct TimelineSample(double Seconds, int Received, int InFlight, int Done, int Lost)
{
    /// <inheritdoc />
    public override string ToString() =>
        $"[{Seconds,8:0.0} s] in flight {InFlight,4}  done {Done,4}  lost {Lost,4}  received {Received,4}";
}
