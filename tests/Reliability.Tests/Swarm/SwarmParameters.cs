namespace PriorityAsync.Reliability.Tests.Swarm;

/// <summary>Everything one swarm run varies, drawn from its seed alone.</summary>
internal sealed record SwarmParameters(
    int Seed,
    int Messages,
    int PoisonMessages,
    int FlakyMessages,
    TimeSpan LockDuration,
    int MaxDeliveryCount,
    TimeSpan Latency,
    double RenewFailureRate,
    double CompleteFailureRate,
    int MaxInFlight,
    TimeSpan ShutdownTimeout,
    TimeSpan StopAfter,
    TimeSpan CpuSlice,
    TimeSpan IoWait,
    int Steps)
{
    /// <summary>Draws the parameters of seed <paramref name="seed"/>: the same seed always gives the same run.</summary>
    public static SwarmParameters From(int seed)
    {
        var random = new Random(seed);
        var messages = random.Next(1, 13);
        var lockDuration = TimeSpan.FromMilliseconds(random.Next(1_000, 10_001));
        return new SwarmParameters(
            seed,
            messages,
            PoisonMessages: random.Next(0, Math.Min(3, messages) + 1),
            FlakyMessages: random.Next(0, 3),
            lockDuration,
            MaxDeliveryCount: random.Next(1, 6),
            Latency: TimeSpan.FromMilliseconds(random.Next(0, 4) == 0 ? 0 : random.Next(1, 301)),
            RenewFailureRate: random.NextDouble() * 0.3,
            CompleteFailureRate: random.NextDouble() * 0.3,
            MaxInFlight: random.Next(1, 5),
            ShutdownTimeout: TimeSpan.FromMilliseconds(random.Next(0, 5_001)),
            StopAfter: TimeSpan.FromMilliseconds(random.Next(0, 30_001)),
            CpuSlice: TimeSpan.FromMilliseconds(random.Next(0, (int)(lockDuration.TotalMilliseconds / 3))),
            IoWait: TimeSpan.FromMilliseconds(random.Next(0, 2_001)),
            Steps: random.Next(1, 4));
    }
}
