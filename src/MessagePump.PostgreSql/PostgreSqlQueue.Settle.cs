using System.Diagnostics.CodeAnalysis;
using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;

namespace PriorityAsync.MessagePump.PostgreSql;

public sealed partial class PostgreSqlQueue
{
    /// <summary>
    /// Completes (deletes) every message of <paramref name="messages"/> in one statement, each under the same guard as
    /// <see cref="PostgreSqlLeasedMessage.CompleteAsync"/>: its lock token must still hold its lock, unexpired on the
    /// server's clock. Messages whose guard fails are left as they are and get their own <see cref="LeaseLostException"/>.
    /// </summary>
    /// <param name="messages">
    /// Messages received from this queue (from any <see cref="PostgreSqlQueue"/> of the same name on the same
    /// transport); at least one. A delivery listed twice is completed once; its second entry gets a lost lease.
    /// </param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>
    /// One entry per message, in order: <see langword="null"/> when the statement deleted it, otherwise a
    /// <see cref="LeaseLostException"/> (its lock expired on the server's clock, it was settled, or it was delivered
    /// again under a newer lock token), or an <see cref="OperationCanceledException"/> when
    /// <paramref name="cancellationToken"/> was canceled meanwhile (as the single complete reports it).
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="messages"/> or one of its items is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="messages"/> is empty or holds a message of another queue or transport.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">
    /// The server could not be reached or failed in a way worth retrying. The statement is all or nothing: it completed
    /// none of the messages, unless the server committed it and only the reply was lost (then retrying finds them gone,
    /// as for the single complete).
    /// </exception>
    public Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        MessageBatch.ThrowIfInvalid(messages); // the abstraction's own check and messages
        var own = new PostgreSqlLeasedMessage[messages.Count];
        for (var i = 0; i < own.Length; i++)
        {
            own[i] = messages[i] is PostgreSqlLeasedMessage message && IsSameQueue(message.Queue)
                ? message
                : throw new ArgumentException($"The message at index {i} ({messages[i]}) was not received from {this} of this transport.", nameof(messages));
        }

        return CompleteManyAsync(own, cancellationToken);
    }

    private async Task<IReadOnlyList<Exception?>> CompleteManyAsync(PostgreSqlLeasedMessage[] messages, CancellationToken cancellationToken)
    {
        var ids = new long[messages.Length];
        var tokens = new Guid[messages.Length];
        for (var i = 0; i < messages.Length; i++)
        {
            ids[i] = messages[i].SequenceNumber;
            tokens[i] = messages[i].LockToken;
        }

        var deleted = await Transport.ExecuteAsync(
            $"Completing {messages.Length} message(s) of {this}",
            Sql.CompleteBatch,
            command =>
            {
                command.Parameters.Add(new NpgsqlParameter<long[]>("ids", ids));
                command.Parameters.Add(new NpgsqlParameter<Guid[]>("tokens", tokens));
            },
            static async (reader, ct) =>
            {
                var rows = new HashSet<(long Id, Guid Token)>();
                while (await reader.ReadAsync(ct).ConfigureAwait(false))
                {
                    rows.Add((reader.GetInt64(0), reader.GetGuid(1)));
                }

                return rows;
            },
            cancellationToken).ConfigureAwait(false);

        var outcomes = new Exception?[messages.Length];
        for (var i = 0; i < messages.Length; i++)
        {
            // Remove, so that a delivery listed twice is completed by its first entry only.
            outcomes[i] = deleted.Remove((ids[i], tokens[i])) ? null : messages[i].LeaseLost("complete", cancellationToken);
        }

        return outcomes;
    }

    /// <summary>
    /// Renews, in one statement, the lock of every message of <paramref name="messages"/> by the queue's lock duration,
    /// each row under the same guard as <see cref="PostgreSqlLeasedMessage.RenewLockAsync"/>: its own lock token must
    /// still hold its lock, unexpired on the server's clock. Messages whose guard fails are left as they are and get
    /// their own <see cref="LeaseLostException"/>.
    /// </summary>
    /// <param name="messages">
    /// Messages received from this queue (from any <see cref="PostgreSqlQueue"/> of the same name on the same
    /// transport); at least one. A delivery listed twice is renewed once, and both entries report it.
    /// </param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>
    /// One entry per message, in order: renewed, with its new <see cref="PostgreSqlLeasedMessage.LockedUntil"/> (the
    /// lock time the server reported left, counted from when the statement was sent), or a failure:
    /// <see cref="LeaseLostException"/> (its lock expired on the server's clock, it was settled, or it was delivered
    /// again under a newer lock token), or <see cref="OperationCanceledException"/> when
    /// <paramref name="cancellationToken"/> was canceled meanwhile (as the single renewal reports it).
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="messages"/> or one of its items is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="messages"/> is empty or holds a message of another queue or transport.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">
    /// The server could not be reached or failed in a way worth retrying. The statement is all or nothing: it renewed
    /// none of the leases, unless the server committed it and only the reply was lost.
    /// </exception>
    public Task<IReadOnlyList<LeaseRenewal>> RenewBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        MessageBatch.ThrowIfInvalid(messages, "renew");
        var own = new PostgreSqlLeasedMessage[messages.Count];
        for (var i = 0; i < own.Length; i++)
        {
            own[i] = messages[i] is PostgreSqlLeasedMessage message && IsSameQueue(message.Queue)
                ? message
                : throw new ArgumentException($"The message at index {i} ({messages[i]}) was not received from {this} of this transport.", nameof(messages));
        }

        return RenewManyAsync(own, cancellationToken);
    }

    [SuppressMessage("Usage", "VSTHRD103:Call async methods when in an async method", Justification = "The reader is opened without SequentialAccess, so ReadAsync has buffered the whole row: the getters only decode memory and never wait on the network.")]
    private async Task<IReadOnlyList<LeaseRenewal>> RenewManyAsync(PostgreSqlLeasedMessage[] messages, CancellationToken cancellationToken)
    {
        var ids = new long[messages.Length];
        var tokens = new Guid[messages.Length];
        for (var i = 0; i < messages.Length; i++)
        {
            ids[i] = messages[i].SequenceNumber;
            tokens[i] = messages[i].LockToken;
        }

        var sentAt = TimeProvider.System.GetUtcNow();
        var renewed = await Transport.ExecuteAsync(
            $"Renewing the locks of {messages.Length} message(s) of {this}",
            Sql.RenewBatch,
            command =>
            {
                command.Parameters.Add(new NpgsqlParameter<long[]>("ids", ids));
                command.Parameters.Add(new NpgsqlParameter<Guid[]>("tokens", tokens));
            },
            static async (reader, ct) =>
            {
                var rows = new Dictionary<(long Id, Guid Token), (DateTimeOffset Server, TimeSpan Remaining)>();
                while (await reader.ReadAsync(ct).ConfigureAwait(false))
                {
                    rows[(reader.GetInt64(0), reader.GetGuid(1))] = (reader.GetFieldValue<DateTimeOffset>(2), reader.GetFieldValue<TimeSpan>(3));
                }

                return rows;
            },
            cancellationToken).ConfigureAwait(false);

        var outcomes = new LeaseRenewal[messages.Length];
        for (var i = 0; i < messages.Length; i++)
        {
            if (renewed.TryGetValue((ids[i], tokens[i]), out var row))
            {
                var lockedUntil = sentAt + row.Remaining;
                messages[i].SetLockedUntil(row.Server, lockedUntil);
                outcomes[i] = LeaseRenewal.Renewed(lockedUntil);
            }
            else
            {
                outcomes[i] = LeaseRenewal.Failed(messages[i].LeaseLost("renew", cancellationToken));
            }
        }

        return outcomes;
    }

    /// <summary>Whether <paramref name="queue"/> is this queue: the same name on the same transport (the same rows).</summary>
    private bool IsSameQueue(PostgreSqlQueue queue) =>
        ReferenceEquals(queue, this) || (ReferenceEquals(queue.Transport, Transport) && string.Equals(queue.Name, Name, StringComparison.Ordinal));
}
