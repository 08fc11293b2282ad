namespace PriorityAsync.MessagePump.PostgreSql.Internal;

/// <summary>
/// Every SQL statement of the transport. Each state change is one statement (READ COMMITTED, autocommit); every value
/// is a parameter, including queue names; times come from the server's clock (<c>clock_timestamp()</c>).
/// </summary>
internal static class Sql
{
    /// <summary>The NOTIFY channel; the payload is the queue name.</summary>
    public const string Channel = "priorityasync";

    /// <summary>The schema, idempotent: run under an advisory lock so that concurrent migrations do not race.</summary>
    public const string Schema = """
        SELECT pg_advisory_xact_lock(hashtext('priorityasync.schema'));
        CREATE SCHEMA IF NOT EXISTS priorityasync;
        CREATE TABLE IF NOT EXISTS priorityasync.queues (
            name               text PRIMARY KEY CHECK (name ~ '^[a-z_][a-z0-9_]{0,47}$'),
            lock_duration      interval NOT NULL CHECK (lock_duration > interval '0'),
            max_delivery_count integer NOT NULL CHECK (max_delivery_count >= 1),
            created_at         timestamptz NOT NULL DEFAULT clock_timestamp()
        );
        CREATE TABLE IF NOT EXISTS priorityasync.messages (
            id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            queue          text NOT NULL REFERENCES priorityasync.queues (name) ON DELETE CASCADE,
            message_id     text NOT NULL,
            body           bytea NOT NULL,
            enqueued_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
            delivery_count integer NOT NULL DEFAULT 0,
            lock_token     uuid,
            locked_until   timestamptz
        );
        CREATE INDEX IF NOT EXISTS messages_queue_id ON priorityasync.messages (queue, id);
        CREATE TABLE IF NOT EXISTS priorityasync.dead_letters (
            id               bigint PRIMARY KEY,
            queue            text NOT NULL REFERENCES priorityasync.queues (name) ON DELETE CASCADE,
            message_id       text NOT NULL,
            body             bytea NOT NULL,
            enqueued_at      timestamptz NOT NULL,
            delivery_count   integer NOT NULL,
            reason           text NOT NULL,
            dead_lettered_at timestamptz NOT NULL DEFAULT clock_timestamp()
        );
        CREATE INDEX IF NOT EXISTS dead_letters_queue_id ON priorityasync.dead_letters (queue, id);
        DO $$
        BEGIN
            -- Added in a later version: altering takes an exclusive lock on the table, so only when the column is missing.
            IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'priorityasync.messages'::regclass AND attname = 'headers' AND NOT attisdropped) THEN
                ALTER TABLE priorityasync.messages ADD COLUMN IF NOT EXISTS headers jsonb;
            END IF;
            IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'priorityasync.dead_letters'::regclass AND attname = 'headers' AND NOT attisdropped) THEN
                ALTER TABLE priorityasync.dead_letters ADD COLUMN IF NOT EXISTS headers jsonb;
            END IF;
        END $$;
        """;

    /// <summary>Creates the queue, or updates its settings: @name, @lock_us (microseconds), @max.</summary>
    public const string UpsertQueue = """
        INSERT INTO priorityasync.queues (name, lock_duration, max_delivery_count)
        VALUES (@name, @lock_us * interval '1 microsecond', @max)
        ON CONFLICT (name) DO UPDATE SET lock_duration = EXCLUDED.lock_duration, max_delivery_count = EXCLUDED.max_delivery_count
        RETURNING lock_duration, max_delivery_count
        """;

    /// <summary>Reads a queue's settings: @name.</summary>
    public const string GetQueue = "SELECT lock_duration, max_delivery_count FROM priorityasync.queues WHERE name = @name";

    /// <summary>Deletes a queue with its messages and dead letters: @name.</summary>
    public const string DeleteQueue = "DELETE FROM priorityasync.queues WHERE name = @name";

    /// <summary>
    /// Enqueues messages (one or a batch) in order and wakes idle receivers: @queue, @ids text[], @bodies bytea[],
    /// @headers text[] (JSON objects, NULL for none).
    /// </summary>
    public const string Send = """
        WITH inserted AS (
            INSERT INTO priorityasync.messages (queue, message_id, body, headers)
            SELECT @queue, t.message_id, t.body, t.headers::jsonb
            FROM unnest(@ids::text[], @bodies::bytea[], @headers::text[]) WITH ORDINALITY AS t (message_id, body, headers, n)
            ORDER BY t.n
            RETURNING id
        )
        SELECT count(*), pg_notify('priorityasync', @queue) FROM inserted
        """;

    /// <summary>
    /// Receives up to @limit messages of @queue: the oldest visible rows (unlocked, or whose lock expired on the server's
    /// clock) are locked with <c>FOR UPDATE SKIP LOCKED</c>; each gets a fresh lock token, <c>locked_until</c> from the
    /// server's clock and one more delivery. A row that already had its last allowed delivery moves to the dead-letter
    /// table instead, in the same statement. Rows with a null id count such dead-lettered messages.
    /// </summary>
    public const string Receive = """
        WITH q AS (
            SELECT lock_duration, max_delivery_count FROM priorityasync.queues WHERE name = @queue
        ), picked AS (
            SELECT m.id, m.delivery_count >= q.max_delivery_count AS exhausted
            FROM priorityasync.messages m, q
            WHERE m.queue = @queue AND (m.locked_until IS NULL OR m.locked_until <= clock_timestamp())
            ORDER BY m.id
            LIMIT @limit
            FOR UPDATE OF m SKIP LOCKED
        ), dead AS (
            DELETE FROM priorityasync.messages m USING picked p
            WHERE m.id = p.id AND p.exhausted
            RETURNING m.id, m.queue, m.message_id, m.body, m.enqueued_at, m.delivery_count, m.headers
        ), moved AS (
            INSERT INTO priorityasync.dead_letters (id, queue, message_id, body, enqueued_at, delivery_count, reason, headers)
            SELECT id, queue, message_id, body, enqueued_at, delivery_count, 'MaxDeliveryCountExceeded', headers FROM dead
            RETURNING id
        ), locked AS (
            UPDATE priorityasync.messages m
            SET lock_token = gen_random_uuid(),
                locked_until = clock_timestamp() + q.lock_duration,
                delivery_count = m.delivery_count + 1
            FROM picked p, q
            WHERE m.id = p.id AND NOT p.exhausted
            RETURNING m.id, m.message_id, m.body, m.enqueued_at, m.delivery_count, m.lock_token, m.locked_until, m.headers
        )
        SELECT id, message_id, body, enqueued_at, delivery_count, lock_token, locked_until,
               locked_until - clock_timestamp() AS remaining, headers::text
        FROM locked
        UNION ALL
        SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM moved
        ORDER BY 1 NULLS LAST
        """;

    /// <summary>Extends an unexpired lock held by @token on message @id by the queue's lock duration from now.</summary>
    public const string Renew = """
        UPDATE priorityasync.messages m
        SET locked_until = clock_timestamp() + q.lock_duration
        FROM priorityasync.queues q
        WHERE m.id = @id AND m.lock_token = @token AND m.locked_until > clock_timestamp() AND q.name = m.queue
        RETURNING m.locked_until, m.locked_until - clock_timestamp() AS remaining
        """;

    /// <summary>
    /// Extends, in one statement, the lock of every message whose pair in (@ids bigint[], @tokens uuid[]) holds its
    /// unexpired lock (the guard of <see cref="Renew"/>, row by row: each row is fenced by its own lock token) by its
    /// queue's lock duration from now; returns the id, token, new <c>locked_until</c> and the time left of each row renewed.
    /// </summary>
    /// <remarks>The arrays are read through sub-selects, as in <see cref="CompleteBatch"/>, so that the plan probes the primary key once per pair.</remarks>
    public const string RenewBatch = """
        UPDATE priorityasync.messages m
        SET locked_until = clock_timestamp() + q.lock_duration
        FROM unnest((SELECT @ids::bigint[]), (SELECT @tokens::uuid[])) AS t (id, lock_token), priorityasync.queues q
        WHERE m.id = t.id AND m.lock_token = t.lock_token AND m.locked_until > clock_timestamp() AND q.name = m.queue
        RETURNING m.id, m.lock_token, m.locked_until, m.locked_until - clock_timestamp() AS remaining
        """;

    /// <summary>Deletes message @id if @token holds its unexpired lock.</summary>
    public const string Complete = """
        DELETE FROM priorityasync.messages
        WHERE id = @id AND lock_token = @token AND locked_until > clock_timestamp()
        """;

    /// <summary>
    /// Deletes, in one statement, every message whose pair in (@ids bigint[], @tokens uuid[]) holds its unexpired lock
    /// (the guard of <see cref="Complete"/>, row by row); returns the id and token of each deleted row.
    /// </summary>
    /// <remarks>
    /// The plan must probe the primary key once per pair whatever the statistics say. A queue table's statistics are
    /// usually stale (it was analyzed nearly empty, then filled; <c>reltuples</c> a few dozen over a thousand pages), so
    /// with the arrays visible to the planner (100 pairs) it preferred a hash join over a sequential scan of the whole
    /// table: 3.7 ms instead of 0.3 ms per 100. The arrays are therefore read through sub-selects (init plans, whose
    /// length the planner does not know), which keeps the nested loop over the primary key; and there is no queue
    /// condition (ids are unique across queues and the caller checked the queue), which once steered the plan into the
    /// <c>(queue, id)</c> index and a scan of the whole queue.
    /// </remarks>
    public const string CompleteBatch = """
        DELETE FROM priorityasync.messages m
        USING unnest((SELECT @ids::bigint[]), (SELECT @tokens::uuid[])) AS t (id, lock_token)
        WHERE m.id = t.id AND m.lock_token = t.lock_token AND m.locked_until > clock_timestamp()
        RETURNING m.id, m.lock_token
        """;

    /// <summary>Releases the unexpired lock @token of message @id and wakes idle receivers.</summary>
    public const string Abandon = """
        WITH released AS (
            UPDATE priorityasync.messages
            SET lock_token = NULL, locked_until = NULL
            WHERE id = @id AND lock_token = @token AND locked_until > clock_timestamp()
            RETURNING queue
        )
        SELECT count(*), pg_notify('priorityasync', @queue) FROM released
        """;

    /// <summary>Moves message @id to the dead-letter table with @reason if @token holds its unexpired lock.</summary>
    public const string DeadLetter = """
        WITH dead AS (
            DELETE FROM priorityasync.messages
            WHERE id = @id AND lock_token = @token AND locked_until > clock_timestamp()
            RETURNING id, queue, message_id, body, enqueued_at, delivery_count, headers
        )
        INSERT INTO priorityasync.dead_letters (id, queue, message_id, body, enqueued_at, delivery_count, reason, headers)
        SELECT id, queue, message_id, body, enqueued_at, delivery_count, @reason, headers FROM dead
        """;

    /// <summary>Counts the visible, locked and dead-lettered messages of @queue, on the server's clock.</summary>
    public const string Statistics = """
        SELECT count(*) FILTER (WHERE locked_until IS NULL OR locked_until <= clock_timestamp()),
               count(*) FILTER (WHERE locked_until > clock_timestamp()),
               (SELECT count(*) FROM priorityasync.dead_letters WHERE queue = @queue)
        FROM priorityasync.messages
        WHERE queue = @queue
        """;

    /// <summary>Reads the dead letters of @queue, oldest message first.</summary>
    public const string DeadLetters = """
        SELECT message_id, body, reason, delivery_count, enqueued_at, dead_lettered_at, headers::text
        FROM priorityasync.dead_letters
        WHERE queue = @queue
        ORDER BY id
        """;
}
