using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.ScaleOut;

/// <summary>
/// Three consumer processes on one queue of 2,000 messages and 5 poison messages: one is killed with SIGKILL
/// mid-flight, one stops gracefully (SIGTERM), the third finishes. Every message is completed exactly once (a trigger
/// records each completion in the same transaction), the poison messages and only they are dead-lettered, and the
/// killed process's messages are delivered again only after their locks expired.
/// </summary>
[Collection(RealTimeCollection.Name)]
public class ScaleOutTests(ITestOutputHelper output)
{
    private const int Good = 2000;
    private const int Poison = 5;
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(3);

    /// <summary>A completions log kept by the database: each delete by a live lock (a complete) adds one row, in the same transaction.</summary>
    private const string CompletionLog = """
        CREATE TABLE completions (message_id text NOT NULL, lock_token uuid NOT NULL, delivery_count int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
        CREATE FUNCTION record_completion() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF OLD.lock_token IS NOT NULL AND OLD.locked_until > clock_timestamp() THEN
                INSERT INTO completions (message_id, lock_token, delivery_count) VALUES (OLD.message_id, OLD.lock_token, OLD.delivery_count);
            END IF;
            RETURN OLD;
        END $$;
        CREATE TRIGGER record_completion AFTER DELETE ON priorityasync.messages FOR EACH ROW EXECUTE FUNCTION record_completion();
        """;

    [PostgresFact]
    public async Task ThreeProcesses_OneKilled_OneStopped_EveryMessageCompletedExactlyOnce()
    {
        var database = PostgresServer.UniqueName("scaleout");
        await PostgresServer.ScalarAsync($"CREATE DATABASE {database}"); // a database of its own: the trigger sees only this test
        var connectionString = new NpgsqlConnectionStringBuilder(PostgresServer.Require()) { Database = database }.ConnectionString;
        var processes = new List<ConsumerProcess>();
        var started = DateTime.UtcNow;
        try
        {
            await using var dataSource = NpgsqlDataSource.Create(connectionString);
            await using var transport = new PostgreSqlTransport(dataSource);
            var queue = await transport.CreateQueueAsync("work", new PostgreSqlQueueOptions { LockDuration = LockDuration, MaxDeliveryCount = 3 });
            await using (var command = dataSource.CreateCommand(CompletionLog))
            {
                await command.ExecuteNonQueryAsync();
            }

            var ids = Enumerable.Range(0, Good).Select(i => $"m{i:0000}").ToList();
            for (var i = 0; i < Poison; i++)
            {
                ids.Insert((i * 400) + 200, $"poison{i}");
            }

            await queue.SendBatchAsync(ids.Select(id => new PostgreSqlMessage(System.Text.Encoding.UTF8.GetBytes(id), id)));
            string[] arguments = ["--queue", "work", "--lock-ms", "3000", "--max-deliveries", "3", "--io-ms", "40", "--cpu-ms", "1", "--poison-prefix", "poison", "--max-in-flight", "8"];
            foreach (var name in new[] { "killed", "stopped", "survivor" })
            {
                processes.Add(ConsumerProcess.Start(name, connectionString, arguments));
            }

            var (killed, stopped, survivor) = (processes[0], processes[1], processes[2]);
            await Task.WhenAll(processes.Select(p => p.WaitReadyAsync(Bounded.Patient)));

            await Bounded.UntilAsync(async () => await CountAsync(dataSource, "SELECT count(*) FROM completions") >= 400, Bounded.Patient, "400 completions");

            // Killed mid-flight by construction, not by luck (a loaded machine may leave it idle at any given moment): all
            // three are frozen, the server has finished every statement they sent, and the process to be killed holds
            // at least one row under its own lock token, which no other process can ever complete. Otherwise all thaw
            // and the test looks again.
            await Bounded.UntilAsync(
                async () =>
                {
                    processes.ForEach(p => p.Freeze());
                    await Bounded.UntilAsync(
                        async () => await CountAsync(dataSource, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()") == 0,
                        Bounded.Patient,
                        "the server to finish the frozen processes' statements",
                        TimeSpan.FromMilliseconds(10));
                    var tokens = killed.Starts.Select(s => s.LockToken).ToArray();
                    if (await CountAsync(dataSource, "SELECT count(*) FROM priorityasync.messages WHERE lock_token = ANY(@tokens) AND message_id LIKE 'm%'", tokens) > 0)
                    {
                        return true;
                    }

                    processes.ForEach(p => p.Thaw());
                    return false;
                },
                Bounded.Patient,
                "a moment when the process to be killed holds a message");
            killed.KillHard();
            stopped.Thaw();
            survivor.Thaw();
            var killedAt = DateTimeOffset.UtcNow;
            await killed.WaitForExitAsync(TimeSpan.FromSeconds(10));

            await Bounded.UntilAsync(async () => await CountAsync(dataSource, "SELECT count(*) FROM completions") >= 900, Bounded.Patient, "900 completions");
            stopped.Terminate();
            await stopped.WaitForExitAsync(TimeSpan.FromSeconds(20));
            stopped.ExitCode.Should().Be(0, "SIGTERM stops the consumer gracefully; stderr: {0}", stopped.Errors);
            var stoppedTokens = stopped.Starts.Select(s => s.LockToken).ToArray();
            (await CountAsync(dataSource, "SELECT count(*) FROM priorityasync.messages WHERE lock_token = ANY(@tokens) AND locked_until > clock_timestamp()", stoppedTokens))
                .Should().Be(0, "a gracefully stopped consumer leaves nothing locked");

            await Bounded.UntilAsync(async () => (await queue.GetStatisticsAsync()).Pending == 0, Bounded.Patient, "the survivor to drain the queue");
            survivor.Terminate();
            await survivor.WaitForExitAsync(TimeSpan.FromSeconds(20));
            survivor.ExitCode.Should().Be(0, "stderr: {0}", survivor.Errors);

            // Every good message completed exactly once; the poison messages, and only they, dead-lettered.
            var completions = await ReadCompletionsAsync(dataSource);
            (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(0, 0, Poison));
            completions.Select(c => c.MessageId).Should().OnlyHaveUniqueItems().And.BeEquivalentTo(ids.Where(id => id.StartsWith('m')));
            var dead = await queue.GetDeadLettersAsync();
            dead.Select(d => d.MessageId).Should().BeEquivalentTo(Enumerable.Range(0, Poison).Select(i => $"poison{i}"));
            dead.Should().OnlyContain(d => d.Reason == PostgreSqlQueue.MaxDeliveryCountExceededReason && d.DeliveryCount == 3);

            // The killed process's messages in flight were delivered again, after their locks expired, and completed by another process.
            var completedBy = completions.ToDictionary(c => c.LockToken);
            var orphaned = killed.Starts.Where(s => s.MessageId.StartsWith('m') && !completedBy.ContainsKey(s.LockToken)).ToList();
            orphaned.Should().NotBeEmpty("the kill came mid-flight");
            var otherStarts = stopped.Starts.Concat(survivor.Starts).ToLookup(s => s.LockToken);
            foreach (var first in orphaned)
            {
                var completion = completions.Single(c => c.MessageId == first.MessageId);
                completion.DeliveryCount.Should().BeGreaterThan(first.Delivery, "{0} was delivered again", first.MessageId);
                var redelivery = otherStarts[completion.LockToken].Should().ContainSingle("another process completed {0}", first.MessageId).Subject;
                // The server's order, not the processes' clocks: each process prints a handler's start after its receive
                // returned, so on a loaded machine a start may come any time after its lock began, and no bound on
                // "redelivery minus first start" holds at any load. That the server hands a message out again only once
                // its lock has expired, on its own clock, is checked exactly by LeaseContractTests (StaleDelivery,
                // ExpiredLock); here the later delivery carries a higher count under a new lock token.
                redelivery.Delivery.Should().BeGreaterThan(first.Delivery, "{0} was delivered again after its first lock", first.MessageId);
                redelivery.LockToken.Should().NotBe(first.LockToken);
            }

            var starts = processes.Sum(p => p.Starts.Count);
            output.WriteLine(
                $"{ids.Count} messages ({Good} + {Poison} poison) in {(DateTime.UtcNow - started).TotalSeconds:0.0} s; handler starts: "
                + string.Join(", ", processes.Select(p => $"{p.Name} {p.Starts.Count}")) + $" (total {starts}); completions {completions.Count}, each id once; "
                + $"dead letters {dead.Count}; killed process's messages in flight {orphaned.Count}, redelivered after "
                + $"{orphaned.Min(o => (otherStarts[completedBy.Values.Single(c => c.MessageId == o.MessageId).LockToken].Single().At - o.At).TotalSeconds):0.00}-"
                + $"{orphaned.Max(o => (otherStarts[completedBy.Values.Single(c => c.MessageId == o.MessageId).LockToken].Single().At - o.At).TotalSeconds):0.00} s "
                + $"(lock {LockDuration.TotalSeconds} s); killed at +{(killedAt - started).TotalSeconds:0.0} s");
            output.WriteLine(stopped.Lines.LastOrDefault() ?? "");
            output.WriteLine(survivor.Lines.LastOrDefault() ?? "");
        }
        finally
        {
            foreach (var process in processes)
            {
                process.Dispose();
            }

            NpgsqlConnection.ClearAllPools();
            await PostgresServer.ScalarAsync($"DROP DATABASE IF EXISTS {database} WITH (FORCE)");
        }
    }

    private static async Task<long> CountAsync(NpgsqlDataSource dataSource, string sql, Guid[]? tokens = null)
    {
        await using var command = dataSource.CreateCommand(sql);
        if (tokens is not null)
        {
            command.Parameters.AddWithValue("tokens", tokens);
        }

        return (long)(await command.ExecuteScalarAsync())!;
    }

    private static async Task<List<(string MessageId, Guid LockToken, int DeliveryCount)>> ReadCompletionsAsync(NpgsqlDataSource dataSource)
    {
        await using var command = dataSource.CreateCommand("SELECT message_id, lock_token, delivery_count FROM completions");
        await using var reader = await command.ExecuteReaderAsync();
        var list = new List<(string, Guid, int)>();
        while (await reader.ReadAsync())
        {
            list.Add((reader.GetString(0), reader.GetGuid(1), reader.GetInt32(2)));
        }

        return list;
    }
}
