using System.Buffers.Binary;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using PriorityAsync;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.Hosting;

namespace WorkerServiceConsumer;

/// <summary>The sample's own settings (section <c>Sample</c>; <c>--messages N</c> sets <see cref="Messages"/>).</summary>
public sealed class SampleOptions
{
    /// <summary>Gets or sets how many messages to produce and handle before the host stops; 0 runs until Ctrl+C.</summary>
    public int Messages { get; set; }

    /// <summary>Gets or sets the pause between two produced messages.</summary>
    public TimeSpan ProduceInterval { get; set; } = TimeSpan.FromMilliseconds(50);

    /// <summary>Gets or sets the simulated I/O of one handler call.</summary>
    public TimeSpan HandlerDelay { get; set; } = TimeSpan.FromMilliseconds(20);
}

/// <summary>A scoped dependency: one per message, disposed when the message's scope is.</summary>
public sealed class OrderUnitOfWork : IAsyncDisposable
{
    private static int s_nextId;
    private static int s_committed;
    private bool _saved;

    /// <summary>Gets how many units of work were disposed with their order saved.</summary>
    public static int Committed => Volatile.Read(ref s_committed);

    /// <summary>Gets the unit of work's id, unique in the process.</summary>
    public int Id { get; } = Interlocked.Increment(ref s_nextId);

    /// <summary>Records an order as saved.</summary>
    public void Save() => _saved = true;

    /// <inheritdoc />
    public ValueTask DisposeAsync()
    {
        if (_saved)
        {
            Interlocked.Increment(ref s_committed);
        }

        return ValueTask.CompletedTask;
    }
}

/// <summary>Counts handled messages and stops the host after <see cref="SampleOptions.Messages"/>.</summary>
public sealed class Progress(IOptions<SampleOptions> options, IHostApplicationLifetime lifetime)
{
    private int _handled;

    /// <summary>Counts one handled message.</summary>
    public void Handled()
    {
        if (Interlocked.Increment(ref _handled) == options.Value.Messages)
        {
            lifetime.StopApplication();
        }
    }
}

/// <summary>Handles one order; resolved from the message's scope.</summary>
public sealed class OrderHandler(OrderUnitOfWork unitOfWork, Progress progress, IOptions<SampleOptions> options, ILogger<OrderHandler> logger) : IMessageHandler
{
    /// <inheritdoc />
    public async Task HandleAsync(MessageContext context, CancellationToken cancellationToken)
    {
        var order = BinaryPrimitives.ReadInt32LittleEndian(context.Message.Body.Span);
        await Task.Delay(options.Value.HandlerDelay, context.TimeProvider, cancellationToken); // simulated I/O, in the lane's clock
        await PriorityScheduler.YieldIfNeeded();                                               // due lease renewals go first
        unitOfWork.Save();
        logger.LogInformation("Order {Order} handled in unit of work {UnitOfWork} (delivery {Delivery})", order, unitOfWork.Id, context.Message.DeliveryCount);
        progress.Handled();
    }
}

/// <summary>Sends orders to the in-memory queue: <see cref="SampleOptions.Messages"/> of them, or until the host stops.</summary>
public sealed class OrderProducer(InMemoryTransport broker, IOptions<SampleOptions> options) : BackgroundService
{
    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var queue = broker.GetQueue("orders");
        for (var order = 1; options.Value.Messages == 0 || order <= options.Value.Messages; order++)
        {
            queue.Send(BitConverter.GetBytes(order));
            try
            {
                await Task.Delay(options.Value.ProduceInterval, stoppingToken);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }
}
