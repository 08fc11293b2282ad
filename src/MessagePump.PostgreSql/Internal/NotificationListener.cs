using System.Collections.Concurrent;
using Npgsql;

namespace PriorityAsync.MessagePump.PostgreSql.Internal;

/// <summary>
/// One connection that LISTENs on the transport's channel and wakes the receivers of the queue named by each
/// notification. Reconnects after a failure (and then wakes everyone, since notifications may have been missed).
/// Started on first use; receivers also poll, so a missed notification only delays a receive.
/// </summary>
internal sealed class NotificationListener : IAsyncDisposable
{
    private static readonly TimeSpan ReconnectDelay = TimeSpan.FromSeconds(1);

    private readonly NpgsqlDataSource _dataSource;
    private readonly ConcurrentDictionary<string, QueueSignal> _signals = new(StringComparer.Ordinal);
    private readonly CancellationTokenSource _stop = new();
    private readonly Lock _gate = new();
    private Task? _loop;

    public NotificationListener(NpgsqlDataSource dataSource)
    {
        _dataSource = dataSource;
    }

    /// <summary>Returns the signal of <paramref name="queue"/>, starting the listener if needed.</summary>
    public QueueSignal GetSignal(string queue)
    {
        if (_loop is null)
        {
            lock (_gate)
            {
                if (_loop is null && !_stop.IsCancellationRequested)
                {
                    _loop = Task.Run(() => ListenAsync(_stop.Token));
                }
            }
        }

        return _signals.GetOrAdd(queue, static _ => new QueueSignal());
    }

    public async ValueTask DisposeAsync()
    {
        Task? loop;
        lock (_gate)
        {
#pragma warning disable VSTHRD103 // under the gate, so that GetSignal cannot start a loop after it; a lock cannot hold an await
            _stop.Cancel();
#pragma warning restore VSTHRD103
            loop = _loop;
        }

        if (loop is not null)
        {
            await loop.ConfigureAwait(false);
        }

        _stop.Dispose();
    }

    private async Task ListenAsync(CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            try
            {
                var connection = await _dataSource.OpenConnectionAsync(stop).ConfigureAwait(false);
                await using var connectionScope = connection.ConfigureAwait(false);
                connection.Notification += OnNotification;
                var listen = new NpgsqlCommand("LISTEN priorityasync", connection);
                await using (listen.ConfigureAwait(false))
                {
                    await listen.ExecuteNonQueryAsync(stop).ConfigureAwait(false);
                }

                WakeAll(); // anything sent while we were not listening
                while (!stop.IsCancellationRequested)
                {
                    await connection.WaitAsync(stop).ConfigureAwait(false);
                }
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (Exception)
            {
                // The server went away or refused us: receivers keep polling; try again shortly.
                WakeAll();
                try
                {
                    await Task.Delay(ReconnectDelay, stop).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
        }
    }

    private void OnNotification(object sender, NpgsqlNotificationEventArgs e)
    {
        if (_signals.TryGetValue(e.Payload, out var signal))
        {
            signal.Set();
        }
    }

    private void WakeAll()
    {
        foreach (var signal in _signals.Values)
        {
            signal.Set();
        }
    }
}
