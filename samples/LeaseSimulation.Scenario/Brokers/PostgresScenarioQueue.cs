using System.Globalization;
using LeaseSimulation.Settings;
using PriorityAsync.MessagePump.PostgreSql;

namespace LeaseSimulation.Brokers;

/// <summary>
/// A PostgreSQL queue for one run (<c>--broker postgres</c>): a queue of its own holding the run's messages ("1" to
/// "N"), locked for the lease duration (scaled to wall time), with one delivery per message as in the seed (a lost
/// lease loses the message: the next receive that reaches it dead-letters it). Deleted when disposed.
/// </summary>
public sealed class PostgresScenarioQueue : IDisposable
{
    private readonly PostgreSqlTransport _transport;

    private PostgresScenarioQueue(PostgreSqlTransport transport, PostgreSqlQueue queue)
    {
        _transport = transport;
        Queue = queue;
    }

    /// <summary>Gets the queue.</summary>
    public PostgreSqlQueue Queue { get; }

    /// <summary>Creates the queue of a run of <paramref name="strategy"/> and sends its messages. Blocks (called before the host starts).</summary>
    /// <param name="settings">The run's settings; <see cref="SimulationSettings.Broker"/> must be <see cref="BrokerKind.Postgres"/>.</param>
    /// <param name="strategy">The strategy's name, part of the queue's name.</param>
    /// <returns>The queue.</returns>
    public static PostgresScenarioQueue Create(SimulationSettings settings, string strategy)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentException.ThrowIfNullOrWhiteSpace(strategy);
        var transport = new PostgreSqlTransport(
            settings.BrokerConnection!,
            new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.Zero });
        try
        {
            var name = $"lease_sim_{strategy.Replace('-', '_')}_{Guid.NewGuid():N}"[..40];
            var queue = transport.CreateQueueAsync(name, new PostgreSqlQueueOptions
            {
                LockDuration = settings.LeaseDuration * settings.TimeScale,
                MaxDeliveryCount = 1,
            }).GetAwaiter().GetResult();
            queue.SendBatchAsync(Enumerable.Range(1, settings.Messages).Select(i =>
                new PostgreSqlMessage(BitConverter.GetBytes(i), i.ToString(CultureInfo.InvariantCulture)))).GetAwaiter().GetResult();
            return new PostgresScenarioQueue(transport, queue);
        }
        catch
        {
            transport.DisposeAsync().AsTask().GetAwaiter().GetResult();
            throw;
        }
    }

    /// <summary>Deletes the queue (with whatever is left in it) and closes the transport.</summary>
    public void Dispose()
    {
        try
        {
            _transport.DeleteQueueAsync(Queue.Name).GetAwaiter().GetResult();
        }
        finally
        {
            _transport.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
    }
}
