namespace LeaseSimulation.Settings;

/// <summary>
/// The parameters of one run of the lost-lease scenario. Durations are in scenario time; on the real clock they are
/// multiplied by <see cref="TimeScale"/>.
/// </summary>
/// <remarks>
/// The seed publishes N = 100, L = 20, IO = 1000 ms and CPU = 100 or 1000 ms. Its receive time, renew interval and
/// lease duration are not published; the defaults here (<see cref="DefaultReceiveTime"/>,
/// <see cref="DefaultRenewInterval"/>, <see cref="DefaultLeaseDuration"/>) were calibrated so that the unprioritised
/// FIFO consumer reproduces the shape of the seed's table (see docs/simulation.md).
/// </remarks>
public sealed record SimulationSettings
{
    /// <summary>The calibrated default receive time (one awaited IO per received message).</summary>
    public static readonly TimeSpan DefaultReceiveTime = TimeSpan.FromMilliseconds(100);

    /// <summary>The calibrated default time the lease keeper waits between two renewals.</summary>
    public static readonly TimeSpan DefaultRenewInterval = TimeSpan.FromSeconds(2);

    /// <summary>The calibrated default lease duration: a renewal later than this after the previous one loses the message.</summary>
    public static readonly TimeSpan DefaultLeaseDuration = TimeSpan.FromSeconds(5);

    /// <summary>
    /// The default real-clock scale: 1 s of scenario time takes 40 ms, so the 3 s slack of a lease is 120 ms of wall
    /// time, above the scheduling noise of a loaded 2-core machine (at 0.02 a renewal was once 60 ms late).
    /// </summary>
    public const double DefaultTimeScale = 0.04;

    /// <summary>
    /// The default worker count of the multi-thread priority scheduler: the processor count, at least 4 (the seed's
    /// CPU operations block by sleeping, and the seed's thread pool ran 50 threads and more).
    /// </summary>
    public static readonly int DefaultThreads = Math.Max(4, Environment.ProcessorCount);

    /// <summary>Gets where the consumer runs.</summary>
    public ContextKind Context { get; init; } = ContextKind.SingleThread;

    /// <summary>Gets what drives time. <see cref="ClockKind.Virtual"/> needs a one-thread context (<see cref="ContextKindExtensions.IsOneThread"/>).</summary>
    public ClockKind Clock { get; init; } = ClockKind.Virtual;

    /// <summary>Gets who judges leases: the embedded in-memory default, or a PostgreSQL server (needs <see cref="ClockKind.Real"/>).</summary>
    public BrokerKind Broker { get; init; } = BrokerKind.Memory;

    /// <summary>
    /// Gets the connection string of the broker: Npgsql's for <see cref="BrokerKind.Postgres"/> (required); for
    /// <see cref="BrokerKind.ServiceBus"/>, a Service Bus connection string naming an existing queue with <c>EntityPath</c>,
    /// or <see langword="null"/> for an in-process test broker; ignored for the in-memory one.
    /// </summary>
    public string? BrokerConnection { get; init; }

    /// <summary>
    /// Gets the latency the in-memory broker adds to every receive, renew and settle call (its
    /// <c>InMemoryQueueOptions.Latency</c>), in scenario time. Only the strategies that go through the in-memory broker
    /// (<c>ConsumerStrategy.UsesInMemoryBroker</c>: the pump) see it. Defaults to zero.
    /// </summary>
    public TimeSpan BrokerLatency { get; init; }

    /// <summary>Gets the real-clock scale: 0.01 turns 1000 ms of scenario time into 10 ms. Ignored on the virtual clock.</summary>
    public double TimeScale { get; init; } = DefaultTimeScale;

    /// <summary>Gets the number of messages in the queue at the start (the seed's N).</summary>
    public int Messages { get; init; } = 100;

    /// <summary>Gets the number of CPU-then-IO iterations per message (the seed's L).</summary>
    public int Loops { get; init; } = 20;

    /// <summary>Gets the duration of one CPU operation, which holds its thread.</summary>
    public TimeSpan CpuTime { get; init; } = TimeSpan.FromMilliseconds(100);

    /// <summary>Gets the duration of one awaited IO operation of the processor.</summary>
    public TimeSpan IoTime { get; init; } = TimeSpan.FromMilliseconds(1000);

    /// <summary>Gets the duration of one receive (an awaited IO operation).</summary>
    public TimeSpan ReceiveTime { get; init; } = DefaultReceiveTime;

    /// <summary>Gets the time the lease keeper waits between two renewals.</summary>
    public TimeSpan RenewInterval { get; init; } = DefaultRenewInterval;

    /// <summary>Gets the lease duration: a renewal more than this after the previous one finds the message lost.</summary>
    public TimeSpan LeaseDuration { get; init; } = DefaultLeaseDuration;

    /// <summary>
    /// Gets how a CPU operation holds its thread on the real clock: by default <see cref="CpuMode.Work"/> (conserved
    /// CPU work); <see cref="CpuMode.Sleep"/> is the seed's blocking sleep.
    /// </summary>
    public CpuMode CpuMode { get; init; } = CpuMode.Work;

    /// <summary>Gets the number of worker threads of the multi-thread priority scheduler.</summary>
    public int Threads { get; init; } = DefaultThreads;

    /// <summary>Gets the seed of the IO-time jitter; equal seeds give equal virtual-time runs.</summary>
    public int Seed { get; init; } = 1;

    /// <summary>Gets the relative jitter of IO and receive times: 0.1 draws each within ±10 % of its nominal value.</summary>
    public double IoJitter { get; init; } = 0.1;

    /// <summary>Gets the worker-thread cap of the starved pool (raised to the pool's minimum when lower).</summary>
    public int StarvedPoolWorkerCap { get; init; } = 4;

    /// <summary>Gets how many blocking items the starved pool keeps queued or running.</summary>
    public int StarvationBacklog { get; init; } = 8;

    /// <summary>Gets how long each blocking item of the starved pool holds its thread, in scenario time.</summary>
    public TimeSpan StarvationBlockTime { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Gets the minimum worker-thread count of the healthy thread pool (the <see cref="ContextKind.ThreadPool"/>
    /// context), or 0 for the number of messages plus 16. The pool adds threads at a wall-clock pace; on a scaled clock
    /// that pace is too slow by the scale factor, so the pool is given up front the threads the seed's pool grew to.
    /// </summary>
    public int ThreadPoolMinWorkers { get; init; }

    /// <summary>
    /// Gets the scenario time after which the run is stopped and the messages still in flight count as lost, or
    /// <see langword="null"/> for <see cref="DefaultDeadline"/>.
    /// </summary>
    public TimeSpan? Deadline { get; init; }

    /// <summary>Gets the deadline in force: <see cref="Deadline"/>, or <see cref="DefaultDeadline"/>.</summary>
    public TimeSpan EffectiveDeadline => Deadline ?? DefaultDeadline;

    /// <summary>
    /// Gets the default deadline: 300 s plus 1.5 × the longer of the CPU work per thread and the IO-bound time with
    /// four messages in flight per thread (messages × loops × (CPU + IO) / (4 × threads)). A consumer that keeps its
    /// leases needs about one of the two; runs that crawl end. With conserved CPU work on the real clock the work is
    /// shared by the machine's cores, not by the threads: 4 workers on 2 cores need the time of 2.
    /// </summary>
    public TimeSpan DefaultDeadline
    {
        get
        {
            var workers = Context.IsOneThread() ? 1 : Threads;
            var cpuThreads = CpuMode == CpuMode.Work && Clock == ClockKind.Real ? Math.Min(workers, Environment.ProcessorCount) : workers;
            var cpuBound = CpuLimit / cpuThreads;
            var ioBound = (CpuTime + IoTime) * ((double)Messages * Loops / (4 * workers));
            return TimeSpan.FromSeconds(300) + ((cpuBound > ioBound ? cpuBound : ioBound) * 1.5);
        }
    }

    /// <summary>Gets the single-thread CPU limit: messages × loops × CPU time, the least time one thread needs.</summary>
    public TimeSpan CpuLimit => CpuTime * ((double)Messages * Loops);

    /// <summary>Throws when a setting is out of range or the combination is invalid; the exception names the setting.</summary>
    /// <exception cref="ArgumentOutOfRangeException">A setting is out of its range.</exception>
    /// <exception cref="ArgumentException">The virtual clock is combined with a multi-thread context.</exception>
    public void Validate()
    {
        ThrowIfNotDefined(Context, nameof(Context));
        ThrowIfNotDefined(Clock, nameof(Clock));
        ThrowIfNotDefined(CpuMode, nameof(CpuMode));
        ThrowIfNotDefined(Broker, nameof(Broker));
        if (Broker == BrokerKind.Postgres)
        {
            if (string.IsNullOrWhiteSpace(BrokerConnection))
            {
                throw new ArgumentException("The PostgreSQL broker needs a connection string.", nameof(BrokerConnection));
            }

            if (Clock != ClockKind.Real)
            {
                throw new ArgumentException("The PostgreSQL broker judges leases on the server's real clock; use the real clock with a time scale.", nameof(Broker));
            }
        }

        if (Broker == BrokerKind.ServiceBus)
        {
            if (Clock != ClockKind.Real)
            {
                throw new ArgumentException("The Service Bus broker judges locks on its own real clock; use the real clock with a time scale.", nameof(Broker));
            }

            if (BrokerConnection is not null && string.IsNullOrWhiteSpace(BrokerConnection))
            {
                throw new ArgumentException("The Service Bus connection string must not be blank (leave it out for the in-process test broker).", nameof(BrokerConnection));
            }
        }

        if (!(TimeScale > 0 && TimeScale <= 1000))
        {
            throw new ArgumentOutOfRangeException(nameof(TimeScale), TimeScale, "TimeScale must be greater than 0 and at most 1000.");
        }

        ThrowIfLess(Messages, 1, nameof(Messages));
        ThrowIfLess(Loops, 1, nameof(Loops));
        ThrowIfLess(Threads, 1, nameof(Threads));
        ThrowIfLess(StarvedPoolWorkerCap, 1, nameof(StarvedPoolWorkerCap));
        ThrowIfLess(ThreadPoolMinWorkers, 0, nameof(ThreadPoolMinWorkers));
        ThrowIfLess(StarvationBacklog, 1, nameof(StarvationBacklog));
        if (StarvationBlockTime <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(StarvationBlockTime), StarvationBlockTime, "StarvationBlockTime must be positive.");
        }

        ThrowIfNegative(CpuTime, nameof(CpuTime));
        ThrowIfNegative(IoTime, nameof(IoTime));
        ThrowIfNegative(ReceiveTime, nameof(ReceiveTime));
        ThrowIfNegative(BrokerLatency, nameof(BrokerLatency));
        if (BrokerLatency.TotalMilliseconds * (Clock == ClockKind.Real ? TimeScale : 1) > uint.MaxValue - 1)
        {
            throw new ArgumentOutOfRangeException(nameof(BrokerLatency), BrokerLatency, $"BrokerLatency must be at most {TimeSpan.FromMilliseconds(uint.MaxValue - 1)} after scaling (the longest .NET timer).");
        }

        if (RenewInterval <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(RenewInterval), RenewInterval, "RenewInterval must be positive.");
        }

        if (LeaseDuration <= RenewInterval)
        {
            throw new ArgumentOutOfRangeException(nameof(LeaseDuration), LeaseDuration, $"LeaseDuration must be longer than RenewInterval ({RenewInterval.TotalMilliseconds} ms).");
        }

        if (Deadline is { } deadline && deadline <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(Deadline), deadline, "Deadline must be positive.");
        }

        if (!(IoJitter >= 0 && IoJitter < 1))
        {
            throw new ArgumentOutOfRangeException(nameof(IoJitter), IoJitter, "IoJitter must be at least 0 and below 1.");
        }

        if (Clock == ClockKind.Virtual && !Context.IsOneThread())
        {
            throw new ArgumentException($"The virtual clock needs a one-thread context (single-thread or hosted); {Context} runs on several threads. Use the real clock with a time scale.", nameof(Clock));
        }
    }

    private static void ThrowIfNotDefined<T>(T value, string name)
        where T : struct, Enum
    {
        if (!Enum.IsDefined(value))
        {
            throw new ArgumentOutOfRangeException(name, value, $"{name} has no value {value}.");
        }
    }

    private static void ThrowIfLess(int value, int minimum, string name)
    {
        if (value < minimum)
        {
            throw new ArgumentOutOfRangeException(name, value, $"{name} must be at least {minimum}.");
        }
    }

    private static void ThrowIfNegative(TimeSpan value, string name)
    {
        if (value < TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(name, value, $"{name} must not be negative.");
        }
    }
}
