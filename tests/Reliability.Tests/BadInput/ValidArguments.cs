using PriorityAsync.MessagePump;
using PriorityAsync.Reliability.Tests.Support;

namespace PriorityAsync.Reliability.Tests.BadInput;

/// <summary>
/// A valid value of every type a public member of PriorityAsync or PriorityAsync.MessagePump takes, so a call can be made with one
/// argument bad and all the others good. Disposes what it created.
/// </summary>
internal sealed class ValidArguments : IAsyncDisposable
{
    private readonly List<object> _created = [];

    public ValidArguments()
    {
        Scheduler = Track(new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 }));
        Clock = new VirtualTimeProvider();
        Broker = new InMemoryTransport(Clock);
        Queue = Broker.CreateQueue($"q{Guid.NewGuid():N}");
        Keeper = Track(new LeaseKeeper(Scheduler, new LeaseKeeperOptions { TimeProvider = Clock }));
    }

    /// <summary>Gets a keeper on <see cref="Scheduler"/> and the queue's clock (disposed before the scheduler).</summary>
    public LeaseKeeper Keeper { get; }

    public PriorityTaskScheduler Scheduler { get; }

    public VirtualTimeProvider Clock { get; }

    public InMemoryTransport Broker { get; }

    public InMemoryQueue Queue { get; }

    /// <summary>Gets whether a valid value of <paramref name="type"/> can be made.</summary>
    public static bool Knows(Type type) => Known.Contains(type) || Nullable.GetUnderlyingType(type) is { } inner && Known.Contains(inner);

    /// <summary>Makes a valid value of <paramref name="type"/>.</summary>
    public object? For(Type type) => (Nullable.GetUnderlyingType(type) ?? type) switch
    {
        var t when t == typeof(int) => 1,
        var t when t == typeof(long) => 1L,
        var t when t == typeof(double) => 0.5,
        var t when t == typeof(bool) => true,
        var t when t == typeof(string) => "valid",
        var t when t == typeof(TimeSpan) => TimeSpan.FromSeconds(1),
        var t when t == typeof(DateTimeOffset) => Clock.GetUtcNow(),
        var t when t == typeof(CancellationToken) => CancellationToken.None,
        var t when t == typeof(LanePriority) => LanePriority.Lease,
        var t when t == typeof(ReadOnlyMemory<byte>) => new ReadOnlyMemory<byte>([1]),
        var t when t == typeof(Func<Task>) => (Func<Task>)(() => Task.CompletedTask),
        var t when t == typeof(Func<Task<int>>) => (Func<Task<int>>)(() => Task.FromResult(1)),
        var t when t == typeof(Action) => (Action)(() => { }),
        var t when t == typeof(TimerCallback) => (TimerCallback)(_ => { }),
        var t when t == typeof(SendOrPostCallback) => (SendOrPostCallback)(_ => { }),
        var t when t == typeof(Func<MessageContext, CancellationToken, Task>) => (Func<MessageContext, CancellationToken, Task>)((_, _) => Task.CompletedTask),
        var t when t == typeof(PriorityScheduler) || t == typeof(PriorityTaskScheduler) => Scheduler,
        var t when t == typeof(PriorityAsyncContext) => Track(new PriorityAsyncContext()),
        var t when t == typeof(PriorityAsyncContextThread) => Track(new PriorityAsyncContextThread()),
        var t when t == typeof(Lane) => Scheduler.GetLane(LanePriority.Processing),
        var t when t == typeof(VirtualTimeProvider) => Clock,
        var t when t == typeof(TimeProvider) => Clock,
        var t when t == typeof(InMemoryTransport) => Broker,
        var t when t == typeof(InMemoryQueue) || t == typeof(IMessageSource) => Queue,
        var t when t == typeof(PriorityMessagePump) => new PriorityMessagePump(Queue, (_, _) => Task.CompletedTask, Scheduler),
        var t when t == typeof(PrioritySchedulerOptions) => new PrioritySchedulerOptions(),
        var t when t == typeof(PriorityTaskSchedulerOptions) => new PriorityTaskSchedulerOptions { WorkerCount = 1 },
        var t when t == typeof(MessagePumpOptions) => new MessagePumpOptions(),
        var t when t == typeof(LeaseKeeperOptions) => new LeaseKeeperOptions(),
        var t when t == typeof(InMemoryQueueOptions) => new InMemoryQueueOptions(),
        var t when t == typeof(LaneOptions) => new LaneOptions("valid"),
        var t when t == typeof(Exception) => new InvalidOperationException("valid"),
        var t when t == typeof(RejectedWorkKind) => RejectedWorkKind.Post,
        var t when t == typeof(LaneAwaitable.Awaiter) => Scheduler.GetLane(LanePriority.Processing).SwitchTo().GetAwaiter(),
        var t when t == typeof(InMemoryMessage) || t == typeof(ILeasedMessage) => ReceiveOne(),
        var t when t == typeof(LeaseKeeper) => Keeper,
        var t when t == typeof(LeaseHandle) => Keeper.Keep(ReceiveOne(), Queue),
        var t when t == typeof(IReadOnlyList<ILeasedMessage>) => new ILeasedMessage[] { ReceiveOne() },
        var t when t == typeof(IDictionary<string, string>) => new Dictionary<string, string>(),
        var t when t == typeof(SynchronizationContext) => new CoreBadValues.NeverPostedHost(),
        var t when t == typeof(object) => new object(),
        var t => throw new InvalidOperationException($"No valid value of {t} is known: add one to ValidArguments."),
    };

    public async ValueTask DisposeAsync()
    {
        foreach (var item in Enumerable.Reverse(_created)) // the later depend on the earlier: the keeper on the scheduler
        {
            switch (item)
            {
                case IAsyncDisposable asyncDisposable:
                    await asyncDisposable.DisposeAsync();
                    break;
                case IDisposable disposable:
                    disposable.Dispose();
                    break;
            }
        }
    }

    private static readonly HashSet<Type> Known =
    [
        typeof(int), typeof(long), typeof(double), typeof(bool), typeof(string), typeof(TimeSpan), typeof(DateTimeOffset),
        typeof(CancellationToken), typeof(LanePriority), typeof(ReadOnlyMemory<byte>), typeof(Func<Task>), typeof(Func<Task<int>>),
        typeof(Action), typeof(TimerCallback), typeof(SendOrPostCallback), typeof(Func<MessageContext, CancellationToken, Task>),
        typeof(PriorityScheduler), typeof(PriorityTaskScheduler), typeof(PriorityAsyncContext), typeof(PriorityAsyncContextThread),
        typeof(Lane), typeof(VirtualTimeProvider), typeof(TimeProvider), typeof(InMemoryTransport), typeof(InMemoryQueue),
        typeof(IMessageSource), typeof(PriorityMessagePump), typeof(PrioritySchedulerOptions), typeof(PriorityTaskSchedulerOptions),
        typeof(MessagePumpOptions), typeof(LeaseKeeperOptions), typeof(InMemoryQueueOptions), typeof(LaneOptions), typeof(Exception), typeof(object),
        typeof(RejectedWorkKind), typeof(LaneAwaitable.Awaiter), typeof(InMemoryMessage), typeof(IReadOnlyList<ILeasedMessage>),
        typeof(IDictionary<string, string>), typeof(SynchronizationContext), typeof(ILeasedMessage), typeof(LeaseKeeper), typeof(LeaseHandle),
    ];

    /// <summary>Sends a message and receives it: a delivery whose lock is held (the queue answers at once).</summary>
    private InMemoryMessage ReceiveOne()
    {
        Queue.Send(new byte[] { 1 });
        return (InMemoryMessage)Queue.ReceiveAsync().GetAwaiter().GetResult()!;
    }

    private T Track<T>(T item)
        where T : notnull
    {
        _created.Add(item);
        return item;
    }
}
