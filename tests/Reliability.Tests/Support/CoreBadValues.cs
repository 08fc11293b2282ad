using System.Diagnostics.Metrics;
using System.Reflection;
using PriorityAsync.MessagePump;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace PriorityAsync.Reliability.Tests.Support;

/// <summary>The bad values per parameter type, and a valid instance per type, for the bad-input table.</summary>
internal static class CoreBadValues
{
    public static readonly Assembly[] Assemblies = [typeof(PriorityScheduler).Assembly, typeof(PriorityAsync.MessagePump.PriorityMessagePump).Assembly];

    public static IReadOnlyList<(string Label, object? Value)> For(Type type)
    {
        if (type == typeof(int))
        {
            return [("-1", -1), ("0", 0), ("int.MinValue", int.MinValue), ("int.MaxValue", int.MaxValue)];
        }

        if (type == typeof(int?))
        {
            return [("-1", (int?)-1), ("0", (int?)0), ("int.MinValue", (int?)int.MinValue), ("int.MaxValue", (int?)int.MaxValue)];
        }

        if (type == typeof(TimeSpan) || type == typeof(TimeSpan?))
        {
            return [("-1 s", TimeSpan.FromSeconds(-1)), ("TimeSpan.MinValue", TimeSpan.MinValue), ("TimeSpan.MaxValue", TimeSpan.MaxValue)];
        }

        if (type == typeof(double))
        {
            return [("-1.0", -1.0), ("NaN", double.NaN), ("+inf", double.PositiveInfinity), ("2.0", 2.0)];
        }

        if (type == typeof(LanePriority))
        {
            return [("rank 31", LanePriority.FromRank(31))];
        }

        if (type == typeof(DateTimeOffset))
        {
            return [("DateTimeOffset.MinValue", DateTimeOffset.MinValue), ("DateTimeOffset.MaxValue", DateTimeOffset.MaxValue)];
        }

        if (type == typeof(string))
        {
            return [("null", null), ("empty", string.Empty), ("whitespace", "  ")];
        }

        if (type == typeof(ReadOnlyMemory<byte>))
        {
            return [("empty", ReadOnlyMemory<byte>.Empty)];
        }

        if (type == typeof(IReadOnlyList<ILeasedMessage>))
        {
            return [("null", null), ("empty", Array.Empty<ILeasedMessage>()), ("a null item", new ILeasedMessage?[] { null })];
        }

        if (type == typeof(IReadOnlyDictionary<string, string>))
        {
            return [("null", null), ("empty", new Dictionary<string, string>()), ("a null value", new Dictionary<string, string> { ["k"] = null! })];
        }

        if (type == typeof(SynchronizationContext))
        {
            return [("null", null), ("the thread-pool context", new SynchronizationContext())];
        }

        if (!type.IsValueType)
        {
            return [("null", null)];
        }

        return [];
    }

    /// <summary>A valid value of <paramref name="type"/>, or false when the table has none.</summary>
    public static bool TryValid(Type type, out object? value)
    {
        value = Valid(type);
        return value is not null || type == typeof(ILogger);
    }

    private static object? Valid(Type type)
    {
        if (type == typeof(string)) return "valid";
        if (type == typeof(object)) return new object();
        if (type == typeof(int)) return 1;
        if (type == typeof(int?)) return (int?)1;
        if (type == typeof(long)) return 1L;
        if (type == typeof(double)) return 0.0;
        if (type == typeof(bool)) return true;
        if (type == typeof(TimeSpan) || type == typeof(TimeSpan?)) return TimeSpan.FromMilliseconds(100);
        if (type == typeof(LanePriority)) return LanePriority.Lease;
        if (type == typeof(DateTimeOffset)) return new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);
        if (type == typeof(ReadOnlyMemory<byte>)) return new ReadOnlyMemory<byte>([1, 2, 3]);
        if (type == typeof(CancellationToken)) return CancellationToken.None;
        if (type == typeof(Exception)) return new InvalidOperationException("valid inner");
        if (type == typeof(Action)) return new Action(() => { });
        if (type == typeof(Func<Task>)) return new Func<Task>(() => Task.CompletedTask);
        if (type == typeof(Func<Task<int>>)) return new Func<Task<int>>(() => Task.FromResult(1));
        if (type == typeof(SendOrPostCallback)) return new SendOrPostCallback(_ => { });
        if (type == typeof(TimerCallback)) return new TimerCallback(_ => { });
        if (type == typeof(TimeProvider) || type == typeof(VirtualTimeProvider)) return new VirtualTimeProvider();
        if (type == typeof(LaneOptions)) return new LaneOptions("valid");
        if (type == typeof(IList<LaneOptions>)) return PrioritySchedulerOptions.DefaultLanes.ToList();
        if (type == typeof(PrioritySchedulerOptions)) return new PrioritySchedulerOptions { ShutdownTimeout = TimeSpan.FromSeconds(1) };
        if (type == typeof(PriorityTaskSchedulerOptions)) return new PriorityTaskSchedulerOptions { WorkerCount = 1, ShutdownTimeout = TimeSpan.FromSeconds(1) };
        if (type == typeof(PriorityScheduler) || type == typeof(PriorityAsyncContext)) return new PriorityAsyncContext();
        if (type == typeof(PriorityTaskScheduler)) return new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ShutdownTimeout = TimeSpan.FromSeconds(1) });
        if (type == typeof(PriorityAsyncContextThread)) return new PriorityAsyncContextThread(new PrioritySchedulerOptions { ShutdownTimeout = TimeSpan.FromSeconds(1) });
        if (type == typeof(Lane)) return new PriorityAsyncContext().Lanes[0];
        if (type == typeof(SynchronizationContext)) return new NeverPostedHost();
        if (type == typeof(RejectedWorkKind)) return RejectedWorkKind.Post;
        if (type == typeof(InMemoryTransport)) return new InMemoryTransport(new VirtualTimeProvider());
        if (type == typeof(InMemoryQueueOptions)) return new InMemoryQueueOptions();
        if (type == typeof(InMemoryQueue) || type == typeof(IMessageSource)) return new InMemoryTransport(new VirtualTimeProvider()).CreateQueue("valid");
        if (type == typeof(MessagePumpOptions)) return new MessagePumpOptions();
        if (type == typeof(Func<MessageContext, CancellationToken, Task>)) return new Func<MessageContext, CancellationToken, Task>((_, _) => Task.CompletedTask);
        if (type == typeof(ILogger)) return NullLogger.Instance;
        if (type == typeof(IReadOnlyDictionary<string, string>)) return new Dictionary<string, string> { ["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };
        if (type == typeof(IMeterFactory)) return new OwnMeterFactory();
        if (type == typeof(IDictionary<string, string>)) return new Dictionary<string, string>();
        if (type == typeof(System.Diagnostics.Activity)) return new System.Diagnostics.Activity("valid").SetIdFormat(System.Diagnostics.ActivityIdFormat.W3C).Start();
        if (type == typeof(IReadOnlyList<ILeasedMessage>)) return new ILeasedMessage[] { ReceivedMessage() };
        if (type == typeof(ILeasedMessage)) return ReceivedMessage();
        if (type == typeof(LeaseKeeperOptions)) return new LeaseKeeperOptions();
        if (type == typeof(LeaseKeeper)) return new LeaseKeeper(new PriorityAsyncContext(), new LeaseKeeperOptions { TimeProvider = new VirtualTimeProvider() });
        if (type == typeof(LeaseHandle)) return ((LeaseKeeper)Valid(typeof(LeaseKeeper))!).Keep(ReceivedMessage()); // both clocks start at VirtualTimeProvider's default
        if (type == typeof(PriorityAsync.MessagePump.PriorityMessagePump)) return new PriorityAsync.MessagePump.PriorityMessagePump((IMessageSource)Valid(typeof(IMessageSource))!, (_, _) => Task.CompletedTask, new PriorityAsyncContext());
        return null;
    }

    /// <summary>A delivery whose lock is held, from a fresh queue that answers at once.</summary>
    private static ILeasedMessage ReceivedMessage()
    {
        var queue = new InMemoryTransport(new VirtualTimeProvider()).CreateQueue("valid");
        queue.Send(new byte[] { 1 });
        return queue.ReceiveAsync().GetAwaiter().GetResult()!;
    }

    /// <summary>A meter factory that makes plain meters (valid for <see cref="MessagePumpOptions.MeterFactory"/>).</summary>
    private sealed class OwnMeterFactory : IMeterFactory
    {
        public Meter Create(MeterOptions options) => new(options);

        public void Dispose()
        {
        }
    }

    /// <summary>A single-thread host for constructing a HostedPriorityScheduler whose lanes get no work (also BadInput's ValidArguments).</summary>
    internal sealed class NeverPostedHost : SynchronizationContext
    {
        public override void Post(SendOrPostCallback d, object? state) => throw new InvalidOperationException("Nothing is posted to this host.");
    }
}
