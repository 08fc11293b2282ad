using System.Text;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;
using PriorityAsync.MessagePump.PostgreSql;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Contract;

/// <summary>The three transports of the contract suite.</summary>
public static class ContractTransports
{
    public const string InMemory = "in-memory";
    public const string PostgreSql = "postgresql";
    public const string ServiceBus = "servicebus";

    /// <summary>
    /// The transports to run: in-memory and Service Bus (the test broker) always; PostgreSQL when a server is configured
    /// (<c>PRIORITYASYNC_POSTGRES</c>) or on CI, where a missing server fails the run rather than hiding it.
    /// </summary>
    public static TheoryData<string> All()
    {
        var names = new TheoryData<string> { InMemory, ServiceBus };
        if (PostgresServer.ConnectionString is not null || PostgresServer.IsCi)
        {
            names.Add(PostgreSql);
        }

        return names;
    }

    public static async Task<ContractTransport> CreateAsync(string name) => name switch
    {
        InMemory => new InMemoryTransport(),
        ServiceBus => await ServiceBusTransportUnderTest.StartAsync(),
        PostgreSql => new PostgreSqlTransportUnderTest(),
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, "Not a transport of the contract suite."),
    };

    private sealed class InMemoryTransport : ContractTransport
    {
        private readonly VirtualTimeProvider _clock = new(DateTimeOffset.UnixEpoch.AddYears(56));
        private readonly MessagePump.InMemoryTransport _broker;
        private InMemoryQueue? _queue;

        public InMemoryTransport() => _broker = new MessagePump.InMemoryTransport(_clock);

        public override string Name => InMemory;

        public override Task<IMessageSource> CreateQueueAsync(TimeSpan lockDuration)
        {
            _queue = _broker.CreateQueue($"q{Guid.NewGuid():N}", new InMemoryQueueOptions { LockDuration = lockDuration });
            return Task.FromResult<IMessageSource>(_queue);
        }

        public override Task SendAsync(string messageId, string body)
        {
            _queue!.Send(Encoding.UTF8.GetBytes(body), messageId);
            return Task.CompletedTask;
        }

        public override Task ExpireLocksAsync(TimeSpan lockDuration)
        {
            _clock.Advance(lockDuration + TimeSpan.FromSeconds(1));
            return Task.CompletedTask;
        }

        public override ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }

    private sealed class ServiceBusTransportUnderTest(SbHarness sb) : ContractTransport
    {
        private ServiceBusTestQueue? _queue;
        private ServiceBusMessageSource? _source;

        public override string Name => ServiceBus;

        public static async Task<ContractTransport> StartAsync() => new ServiceBusTransportUnderTest(await SbHarness.StartAsync(virtualTime: true));

        public override async Task<IMessageSource> CreateQueueAsync(TimeSpan lockDuration)
        {
            var name = $"q{Guid.NewGuid():N}";
            _queue = sb.Broker.CreateQueue(name, new ServiceBusTestEntityOptions { LockDuration = lockDuration });

            // Locks judged by the broker's (virtual) clock: the source's own bound uses the system clock, so every call
            // reaches the broker. No LockDuration option: the first-receive check would compare the two clocks.
            _source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue(name), new ServiceBusSourceOptions { MaxWaitTime = TimeSpan.FromMilliseconds(300) });
            return _source;
        }

        public override Task SendAsync(string messageId, string body)
        {
            _queue!.Send(Encoding.UTF8.GetBytes(body), messageId);
            return Task.CompletedTask;
        }

        public override Task ExpireLocksAsync(TimeSpan lockDuration)
        {
            sb.VirtualClock.Advance(lockDuration + TimeSpan.FromSeconds(1));
            return Task.CompletedTask;
        }

        public override async ValueTask DisposeAsync()
        {
            if (_source is not null)
            {
                await _source.DisposeAsync();
            }

            await sb.DisposeAsync();
        }
    }

    private sealed class PostgreSqlTransportUnderTest : ContractTransport
    {
        private readonly PostgreSqlTransport _transport = PostgresServer.CreateTransport(new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.FromMilliseconds(300), PollInterval = TimeSpan.FromMilliseconds(100) });
        private PostgreSqlQueue? _queue;

        public override string Name => PostgreSql;

        public override async Task<IMessageSource> CreateQueueAsync(TimeSpan lockDuration)
        {
            _queue = await _transport.CreateQueueAsync(PostgresServer.UniqueName("contract"), new PostgreSqlQueueOptions { LockDuration = lockDuration });
            return _queue;
        }

        public override Task SendAsync(string messageId, string body) => _queue!.SendAsync(Encoding.UTF8.GetBytes(body), messageId);

        // The server's clock decides: wait the lock out on the real clock.
        public override Task ExpireLocksAsync(TimeSpan lockDuration) => Task.Delay(lockDuration + TimeSpan.FromMilliseconds(300));

        public override async ValueTask DisposeAsync()
        {
            if (_queue is not null)
            {
                await _transport.DeleteQueueAsync(_queue.Name);
            }

            await _transport.DisposeAsync();
        }
    }
}
