namespace PriorityAsync.MessagePump.Tests.Pump;

public class MessagePumpOptionsTests
{
    private static readonly Func<MessageContext, CancellationToken, Task> Handler = (_, _) => Task.CompletedTask;

    public static TheoryData<string, Action<MessagePumpOptions>> InvalidOptions => new()
    {
        { nameof(MessagePumpOptions.Name), o => o.Name = " " },
        { nameof(MessagePumpOptions.MaxInFlight), o => o.MaxInFlight = 0 },
        { nameof(MessagePumpOptions.MaxInFlight), o => o.MaxInFlight = -3 },
        { nameof(MessagePumpOptions.MaxBatchSize), o => o.MaxBatchSize = 0 },
        { nameof(MessagePumpOptions.MaxBatchSize), o => o.MaxBatchSize = MessagePumpOptions.MaxBatchSizeLimit + 1 },
        { "LeaseKeeper.LockRenewalBuffer", o => o.LeaseKeeper.LockRenewalBuffer = TimeSpan.Zero },
        { "LeaseKeeper.LockRenewalBuffer", o => o.LeaseKeeper.LockRenewalBuffer = TimeSpan.FromSeconds(30) },
        { "LeaseKeeper.LockRenewalBuffer", o => o.LeaseKeeper.LockRenewalBuffer = TimeSpan.FromMinutes(1) },
        { "LeaseKeeper.MaxBatchSize", o => o.LeaseKeeper.MaxBatchSize = 0 },
        { "LeaseKeeper.TransientRetryDelay", o => o.LeaseKeeper.TransientRetryDelay = TimeSpan.Zero },
        { "LeaseKeeper.Name", o => o.LeaseKeeper.Name = "renewals" },
        { "LeaseKeeper.LeaseLane", o => o.LeaseKeeper.LeaseLane = LanePriority.Processing },
        { "LeaseKeeper.TimeProvider", o => o.LeaseKeeper.TimeProvider = new VirtualTimeProvider() },
        { nameof(MessagePumpOptions.LeaseKeeper), o => o.LeaseKeeper = null! },
        { nameof(MessagePumpOptions.TransientRetryDelay), o => o.TransientRetryDelay = TimeSpan.Zero },
        { nameof(MessagePumpOptions.TransientRetryDelay), o => o.TransientRetryDelay = PrioritySchedulerOptions.MaxTimerDelay + TimeSpan.FromTicks(1) },
        { nameof(MessagePumpOptions.EmptyReceiveDelay), o => o.EmptyReceiveDelay = TimeSpan.FromSeconds(-1) },
        { nameof(MessagePumpOptions.ShutdownTimeout), o => o.ShutdownTimeout = TimeSpan.FromSeconds(-2) },
        { nameof(MessagePumpOptions.ShutdownTimeout), o => o.ShutdownTimeout = PrioritySchedulerOptions.MaxTimerDelay + TimeSpan.FromTicks(1) },
        { nameof(MessagePumpOptions.LeaseLane), o => o.LeaseLane = LanePriority.FromRank(7) },
        { nameof(MessagePumpOptions.ProcessingLane), o => o.ProcessingLane = LanePriority.FromRank(7) },
        { nameof(MessagePumpOptions.ProcessingLane), o => o.ProcessingLane = LanePriority.Lease },
        { nameof(MessagePumpOptions.ReceiveLane), o => o.ReceiveLane = LanePriority.Processing },
        { nameof(MessagePumpOptions.ReceiveLane), o => o.ReceiveLane = LanePriority.FromRank(3) },
    };

    [Theory]
    [MemberData(nameof(InvalidOptions))]
    public void Construction_InvalidOption_ThrowsNamingIt(string option, Action<MessagePumpOptions> breakIt)
    {
        var options = new MessagePumpOptions();
        breakIt(options);
        using var context = new PriorityAsyncContext();
        var queue = new InMemoryTransport().CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });

        var create = () => new PriorityMessagePump(queue, Handler, context, options);

        var thrown = create.Should().Throw<ArgumentException>().WithParameterName(option);
        if (option != nameof(MessagePumpOptions.Name))
        {
            thrown.WithMessage($"MessagePumpOptions.{option} *", "the message names the option and its rule");
        }
    }

    /// <summary>The limits of each documented range are accepted.</summary>
    [Fact]
    public void Construction_OptionsAtTheirLimits_AreAccepted()
    {
        using var context = new PriorityAsyncContext();
        var queue = new InMemoryTransport().CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        PriorityMessagePump Create(Action<MessagePumpOptions> set)
        {
            var options = new MessagePumpOptions();
            set(options);
            return new PriorityMessagePump(queue, Handler, context, options);
        }

        Create(o => o.MaxInFlight = 1).MaxInFlight.Should().Be(1);
        var clock = new VirtualTimeProvider();
        Create(o => o.TimeProvider = clock).TimeProvider.Should().BeSameAs(clock, "the option replaces the scheduler's clock");
        FluentActions.Invoking(() => Create(o => o.MaxBatchSize = 1)).Should().NotThrow();
        FluentActions.Invoking(() => Create(o => o.MaxBatchSize = MessagePumpOptions.MaxBatchSizeLimit)).Should().NotThrow();
        FluentActions.Invoking(() => Create(o => o.LeaseKeeper.LockRenewalBuffer = TimeSpan.FromTicks(1))).Should().NotThrow();
        FluentActions.Invoking(() => Create(o => o.TransientRetryDelay = PrioritySchedulerOptions.MaxTimerDelay)).Should().NotThrow();
        FluentActions.Invoking(() => Create(o => o.EmptyReceiveDelay = TimeSpan.FromTicks(1))).Should().NotThrow();
        FluentActions.Invoking(() => Create(o => o.ShutdownTimeout = TimeSpan.Zero)).Should().NotThrow();
        FluentActions.Invoking(() => Create(o => o.ShutdownTimeout = PrioritySchedulerOptions.MaxTimerDelay)).Should().NotThrow();
        FluentActions.Invoking(() => Create(o => o.ShutdownTimeout = Timeout.InfiniteTimeSpan)).Should().NotThrow();
    }

    [Fact]
    public void Construction_NullArguments_ThrowNamingThem()
    {
        using var context = new PriorityAsyncContext();
        var queue = new InMemoryTransport().CreateQueue("q");

        FluentActions.Invoking(() => new PriorityMessagePump(null!, Handler, context)).Should().Throw<ArgumentNullException>().WithParameterName("source");
        FluentActions.Invoking(() => new PriorityMessagePump(queue, null!, context)).Should().Throw<ArgumentNullException>().WithParameterName("handler");
        FluentActions.Invoking(() => new PriorityMessagePump(queue, Handler, null!)).Should().Throw<ArgumentNullException>().WithParameterName("scheduler");
    }

    [Fact]
    public void Construction_CopiesOptions_AndDerivesDefaults()
    {
        using var context = new PriorityAsyncContext();
        var queue = new InMemoryTransport().CreateQueue("q");
        var options = new MessagePumpOptions { Name = "orders" };

        var pump = new PriorityMessagePump(queue, Handler, context, options);
        options.Name = "changed";
        options.MaxInFlight = 99;

        pump.Name.Should().Be("orders");
        pump.MaxInFlight.Should().Be(MessagePumpOptions.DefaultInFlightPerWorker);
        pump.TimeProvider.Should().BeSameAs(context.TimeProvider);
        pump.LeaseLane.Should().BeSameAs(context.GetLane(LanePriority.Lease));
        pump.ProcessingLane.Should().BeSameAs(context.GetLane(LanePriority.Processing));
        pump.ReceiveLane.Should().BeSameAs(context.GetLane(LanePriority.Receive));
    }

    [Fact]
    public void Construction_LockBufferBelowLockDuration_IsAccepted()
    {
        using var context = new PriorityAsyncContext();
        var queue = new InMemoryTransport().CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });

        var create = () => new PriorityMessagePump(queue, Handler, context, new MessagePumpOptions { LeaseKeeper = new() { LockRenewalBuffer = TimeSpan.FromSeconds(29) }, ShutdownTimeout = Timeout.InfiniteTimeSpan });

        create.Should().NotThrow();
    }
}
