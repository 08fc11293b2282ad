using System.Diagnostics.CodeAnalysis;
using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;

namespace PriorityAsync.MessagePump.PostgreSql;

/// <summary>
/// One queue of a <see cref="PostgreSqlTransport"/>: the rows of <c>priorityasync.messages</c> whose <c>queue</c> is
/// <see cref="Name"/>. A receive locks the oldest visible message with a fresh lock token until <c>locked_until</c> on
/// the server's clock; only that token, before that time, can renew or settle the message. Thread-safe; any number of
/// receivers, in any number of processes, may share a queue.
/// </summary>
[SuppressMessage("Naming", "CA1711:Identifiers should not have incorrect suffix", Justification = "Public API name: it is a message queue in PostgreSQL, not a Queue<T> collection; renaming would break callers.")]
public sealed partial class PostgreSqlQueue : IMessageSource
{
    /// <summary>The dead-letter reason of a message whose last allowed delivery ended unsettled.</summary>
    internal const string MaxDeliveryCountExceededReason = "MaxDeliveryCountExceeded";

    /// <summary>The queue's <see cref="IMessageSource.MessagingSystem"/> (OpenTelemetry <c>messaging.system</c>).</summary>
    internal const string MessagingSystemName = "postgresql";

    internal PostgreSqlQueue(PostgreSqlTransport transport, string name, TimeSpan lockDuration, int maxDeliveryCount)
    {
        Transport = transport;
        Name = name;
        LockDuration = lockDuration;
        MaxDeliveryCount = maxDeliveryCount;
    }

    /// <summary>Gets the queue's name.</summary>
    public string Name { get; }

    /// <summary>Gets the queue's lock duration, as read when the queue was opened.</summary>
    internal TimeSpan LockDuration { get; }

    /// <summary>Gets how many deliveries a message gets before it is dead-lettered, as read when the queue was opened.</summary>
    internal int MaxDeliveryCount { get; }

    /// <summary>Gets the transport the queue belongs to.</summary>
    internal PostgreSqlTransport Transport { get; }

    /// <inheritdoc />
    TimeSpan? IMessageSource.LockDuration => LockDuration;

    /// <inheritdoc />
    /// <remarks>True: <see cref="CompleteBatchAsync"/> is one statement.</remarks>
    bool IMessageSource.CompletesBatchesNatively => true;

    /// <inheritdoc />
    /// <remarks>True: <see cref="RenewBatchAsync"/> is one statement.</remarks>
    bool IMessageSource.RenewsBatchesNatively => true;

    /// <inheritdoc />
    /// <remarks><see cref="MessagingSystemName"/>.</remarks>
    string IMessageSource.MessagingSystem => MessagingSystemName;

    /// <inheritdoc />
    /// <remarks>The queue's <see cref="Name"/>.</remarks>
    string? IMessageSource.DestinationName => Name;

    /// <summary>Sends one message, with headers if given, and wakes idle receivers.</summary>
    /// <param name="body">The message's body.</param>
    /// <param name="messageId">The message's identifier; <see langword="null"/> for a generated one (a GUID).</param>
    /// <param name="headers">The message's headers (<see cref="PostgreSqlMessage.Headers"/>); <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The message's identifier.</returns>
    /// <exception cref="ArgumentException"><paramref name="headers"/> holds a null value.</exception>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying; the message may or may not have been sent.</exception>
    public async Task<string> SendAsync(ReadOnlyMemory<byte> body, string? messageId = null, IReadOnlyDictionary<string, string>? headers = null, CancellationToken cancellationToken = default)
    {
        var ids = await SendBatchAsync([new PostgreSqlMessage(body, messageId) { Headers = headers }], cancellationToken).ConfigureAwait(false);
        return ids[0];
    }

    /// <summary>Sends messages in one statement (all or none), in order, and wakes idle receivers.</summary>
    /// <param name="messages">The messages.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The messages' identifiers, in order.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="messages"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="messages"/> holds a null message, or headers with a null value.</exception>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying; the batch may or may not have been sent.</exception>
    public async Task<IReadOnlyList<string>> SendBatchAsync(IEnumerable<PostgreSqlMessage> messages, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(messages);
        var list = messages as IReadOnlyList<PostgreSqlMessage> ?? [.. messages];
        if (list.Count == 0)
        {
            return [];
        }

        var ids = new string[list.Count];
        var bodies = new byte[list.Count][];
        var headers = new string?[list.Count];
        for (var i = 0; i < list.Count; i++)
        {
            var message = list[i] ?? throw new ArgumentException("The batch holds a null message.", nameof(messages));
            ids[i] = message.MessageId ?? Guid.NewGuid().ToString("N");
            bodies[i] = message.Body.ToArray();
            headers[i] = HeadersJson.Write(message.Headers, nameof(messages));
        }

        await Transport.ExecuteAsync(
            $"Sending {ids.Length} message(s) to {this}",
            Sql.Send,
            command =>
            {
                command.Parameters.Add(new NpgsqlParameter<string>("queue", Name));
                command.Parameters.Add(new NpgsqlParameter<string[]>("ids", ids));
                command.Parameters.Add(new NpgsqlParameter<byte[][]>("bodies", bodies));
                command.Parameters.Add(new NpgsqlParameter<string?[]>("headers", headers));
            },
            static async (reader, ct) => await reader.ReadAsync(ct).ConfigureAwait(false) ? reader.GetInt64(0) : 0,
            cancellationToken).ConfigureAwait(false);
        return ids;
    }

    /// <summary>Counts the queue's visible, locked and dead-lettered messages in one statement.</summary>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The counts.</returns>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying.</exception>
    public Task<PostgreSqlQueueStatistics> GetStatisticsAsync(CancellationToken cancellationToken = default) =>
        Transport.ExecuteAsync(
            $"Reading the statistics of {this}",
            Sql.Statistics,
            command => command.Parameters.Add(new NpgsqlParameter<string>("queue", Name)),
            static async (reader, ct) =>
            {
                await reader.ReadAsync(ct).ConfigureAwait(false);
                return new PostgreSqlQueueStatistics(reader.GetInt64(0), reader.GetInt64(1), reader.GetInt64(2));
            },
            cancellationToken);

    /// <summary>Reads the queue's dead-letter table, oldest message first.</summary>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The dead letters.</returns>
    /// <exception cref="TransientTransportException">The server could not be reached or failed in a way worth retrying.</exception>
    [SuppressMessage("Usage", "VSTHRD103:Call async methods when in an async method", Justification = "The reader is opened without SequentialAccess, so ReadAsync has buffered the whole row: the getters only decode memory and never wait on the network (as GetInt32/GetString, which have no async form, already do).")]
    public Task<IReadOnlyList<PostgreSqlDeadLetter>> GetDeadLettersAsync(CancellationToken cancellationToken = default) =>
        Transport.ExecuteAsync<IReadOnlyList<PostgreSqlDeadLetter>>(
            $"Reading the dead letters of {this}",
            Sql.DeadLetters,
            command => command.Parameters.Add(new NpgsqlParameter<string>("queue", Name)),
            static async (reader, ct) =>
            {
                var list = new List<PostgreSqlDeadLetter>();
                while (await reader.ReadAsync(ct).ConfigureAwait(false))
                {
                    list.Add(new PostgreSqlDeadLetter(
                        reader.GetString(0),
                        reader.GetFieldValue<byte[]>(1),
                        reader.GetString(2),
                        reader.GetInt32(3),
                        reader.GetFieldValue<DateTimeOffset>(4),
                        reader.GetFieldValue<DateTimeOffset>(5))
                    {
                        Headers = HeadersJson.Read(reader.IsDBNull(6) ? null : reader.GetString(6)),
                    });
                }

                return list;
            },
            cancellationToken);

    /// <inheritdoc />
    public override string ToString() => $"PostgreSqlQueue '{Name}'";
}
