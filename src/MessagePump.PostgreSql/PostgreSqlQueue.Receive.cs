using System.Diagnostics.CodeAnalysis;
using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;

namespace PriorityAsync.MessagePump.PostgreSql;

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
    internal async Task<ILeasedMessage?> ReceiveAsync(TimeSpan maxWaitTime, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxWaitTime, TimeSpan.Zero);
        var received = await ReceiveWaitingAsync(1, maxWaitTime, cancellationToken).ConfigureAwait(false);
        return received.Count > 0 ? received[0] : null;
    }

    /// <summary>
    /// Receives and locks up to <paramref name="maxMessages"/> of the oldest visible messages in one statement, waiting
    /// up to the transport's <see cref="PostgreSqlTransportOptions.ReceiveWaitTime"/> for the first one when the queue
    /// is empty. Returns as soon as one statement locked at least one message: it never waits to fill the batch.
    /// </summary>
    /// <param name="maxMessages">The most messages to return; at least 1.</param>
    /// <param name="cancellationToken">Cancels the receive, including the wait.</param>
    /// <returns>The locked messages, oldest first; none when no message became visible within the wait.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxMessages"/> is zero or negative.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying.</exception>
    public Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default) =>
        ReceiveBatchAsync(maxMessages, Transport.Options.ReceiveWaitTime, cancellationToken);

    /// <summary>
    /// Receives and locks up to <paramref name="maxMessages"/> of the oldest visible messages in one statement, waiting
    /// up to <paramref name="maxWaitTime"/> for the first one exactly as <see cref="ReceiveAsync(TimeSpan, CancellationToken)"/>
    /// waits (NOTIFY and <see cref="PostgreSqlTransportOptions.PollInterval"/>). Returns as soon as one statement locked
    /// at least one message: it never waits to fill the batch. Messages that had their last allowed delivery are moved
    /// to the dead-letter table by the same statement and count against <paramref name="maxMessages"/>.
    /// </summary>
    /// <param name="maxMessages">The most messages to return; at least 1.</param>
    /// <param name="maxWaitTime">How long to wait for a first message; zero looks once.</param>
    /// <param name="cancellationToken">Cancels the receive before its statement runs or while it waits; messages already locked are returned.</param>
    /// <returns>The locked messages, oldest first; none when no message became visible within the wait.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxMessages"/> is zero or negative, or <paramref name="maxWaitTime"/> is negative.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying.</exception>
    internal Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, TimeSpan maxWaitTime, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessages);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxWaitTime, TimeSpan.Zero);
        return AsLeasedAsync(ReceiveWaitingAsync(maxMessages, maxWaitTime, cancellationToken));

        [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "Awaits the receive this method has just started (ReceiveWaitingAsync) only to widen its result type; no JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
        static async Task<IReadOnlyList<ILeasedMessage>> AsLeasedAsync(Task<IReadOnlyList<PostgreSqlLeasedMessage>> receive) =>
            await receive.ConfigureAwait(false);
    }

    /// <summary>
    /// The wait loop of every receive: runs the receive statement for up to <paramref name="maxMessages"/> and, while it
    /// finds nothing, waits for the queue's NOTIFY or <see cref="PostgreSqlTransportOptions.PollInterval"/>, whichever
    /// comes first, until <paramref name="maxWaitTime"/> is over. Returns the first non-empty result at once.
    /// </summary>
    private async Task<IReadOnlyList<PostgreSqlLeasedMessage>> ReceiveWaitingAsync(int maxMessages, TimeSpan maxWaitTime, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        var clock = TimeProvider.System;
        var deadline = clock.GetUtcNow() + maxWaitTime;
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var wakeUp = maxWaitTime > TimeSpan.Zero ? Transport.Listener.GetSignal(Name).Next : null;

            // The statement itself is not canceled (it is short, and bounded by the command timeout): a receive canceled
            // after the server locked messages but before the reply was read would leave them locked, unseen, until their
            // locks expired. Cancellation is honoured before the statement and during the wait.
            var received = await LockBatchAsync(maxMessages, CancellationToken.None).ConfigureAwait(false);
            if (received.Count > 0)
            {
                return received;
            }

            var remaining = deadline - clock.GetUtcNow();
            if (wakeUp is null || remaining <= TimeSpan.Zero)
            {
                return received;
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
    /// their last delivery are dead-lettered by the same statement; when it moved some and locked none, the statement is
    /// repeated). Does not wait.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD103:Call async methods when in an async method", Justification = "The reader is opened without SequentialAccess, so ReadAsync has buffered the whole row: the getters only decode memory and never wait on the network (as GetInt32/GetString, which have no async form, already do).")]
    internal async Task<IReadOnlyList<PostgreSqlLeasedMessage>> LockBatchAsync(int maxMessages, CancellationToken cancellationToken)
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
                            lockedUntil: sentAt + reader.GetFieldValue<TimeSpan>(7),
                            headers: HeadersJson.Read(reader.IsDBNull(8) ? null : reader.GetString(8))));
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
