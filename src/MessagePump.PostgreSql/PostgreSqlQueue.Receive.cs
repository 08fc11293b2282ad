using Npgsql;
using PriorityAsync.Messaging.PostgreSql.Internal;

namespace PriorityAsync.Messaging.PostgreSql;

public sealed partial class PostgreSqlQueue
{
    /// <summary>
    /// Receives the oldest visible message and locks it, waiting up to the transport's
    /// <see cref="PostgreSqlTransportOptions.ReceiveWaitTime"/> for one when the queue is empty.
    /// </summary>
    /// <param name="cancellationToken">Cancels the receive, including the wait.</param>
    /// <returns>The locked message, or <see langword="null"/> when none became visible within the wait.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying.</exception>
    public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
        ReceiveAsync(Transport.Options.ReceiveWaitTime, cancellationToken);

    /// <summary>
    /// Receives the oldest visible message and locks it, waiting up to <paramref name="maxWaitTime"/> for one: an idle
    /// receive wakes on a NOTIFY (a send or an abandon) and looks again every
    /// <see cref="PostgreSqlTransportOptions.PollInterval"/> (locks that expire notify nobody).
    /// </summary>
    /// <param name="maxWaitTime">How long to wait for a message; zero looks once.</param>
    /// <param name="cancellationToken">Cancels the receive before its statement runs or while it waits; a message already locked is returned.</param>
    /// <returns>The locked message, or <see langword="null"/> when none became visible within the wait.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxWaitTime"/> is negative.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying.</exception>
    public async Task<ILeasedMessage?> ReceiveAsync(TimeSpan maxWaitTime, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxWaitTime, TimeSpan.Zero);
        cancellationToken.ThrowIfCancellationRequested();
        var clock = TimeProvider.System;
        var deadline = clock.GetUtcNow() + maxWaitTime;
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var wakeUp = maxWaitTime > TimeSpan.Zero ? Transport.Listener.GetSignal(Name).Next : null;

            // The statement itself is not canceled (it is short, and bounded by the command timeout): a receive canceled
            // after the server locked a message but before the reply was read would leave that message locked, unseen,
            // until its lock expired. Cancellation is honoured before the statement and during the wait.
            var received = await ReceiveBatchAsync(1, CancellationToken.None).ConfigureAwait(false);
            if (received.Count > 0)
            {
                return received[0];
            }

            var remaining = deadline - clock.GetUtcNow();
            if (wakeUp is null || remaining <= TimeSpan.Zero)
            {
                return null;
            }

            try
            {
                await wakeUp.WaitAsync(remaining < Transport.Options.PollInterval ? remaining : Transport.Options.PollInterval, cancellationToken).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                // Poll: an expired lock made a message visible without a notification.
            }
        }
    }

    /// <summary>
    /// Receives and locks up to <paramref name="maxMessages"/> visible messages in one statement (messages that had
    /// their last delivery are dead-lettered by the same statement and the statement is repeated). Does not wait.
    /// </summary>
    internal async Task<IReadOnlyList<PostgreSqlLeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken)
    {
        while (true)
        {
            var sentAt = TimeProvider.System.GetUtcNow();
            var (messages, deadLettered) = await Transport.ExecuteAsync(
                $"Receiving from {this}",
                Sql.Receive,
                command =>
                {
                    command.Parameters.Add(new NpgsqlParameter<string>("queue", Name));
                    command.Parameters.Add(new NpgsqlParameter<int>("limit", maxMessages));
                },
                async (reader, ct) =>
                {
                    var list = new List<PostgreSqlLeasedMessage>();
                    var dead = 0;
                    while (await reader.ReadAsync(ct).ConfigureAwait(false))
                    {
                        if (reader.IsDBNull(0))
                        {
                            dead++;
                            continue;
                        }

                        list.Add(new PostgreSqlLeasedMessage(
                            this,
                            sequenceNumber: reader.GetInt64(0),
                            messageId: reader.GetString(1),
                            body: reader.GetFieldValue<byte[]>(2),
                            enqueuedAt: reader.GetFieldValue<DateTimeOffset>(3),
                            deliveryCount: reader.GetInt32(4),
                            lockToken: reader.GetGuid(5),
                            serverLockedUntil: reader.GetFieldValue<DateTimeOffset>(6),
                            lockedUntil: sentAt + reader.GetFieldValue<TimeSpan>(7)));
                    }

                    return (list, dead);
                },
                cancellationToken).ConfigureAwait(false);

            if (messages.Count > 0 || deadLettered == 0)
            {
                return messages;
            }
        }
    }
}
