using System.Collections.Concurrent;
using Npgsql;
using PriorityAsync.MessagePump.PostgreSql.Internal;
using PriorityAsync.MessagePump.PostgreSql.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Transport;

/// <summary>A server that goes away mid-run: calls fail with <see cref="TransientTransportException"/> and nothing is lost.</summary>
[Collection(RealTimeCollection.Name)]
public class ServerFailureTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData("57P01", true)]
    [InlineData("57P02", true)]
    [InlineData("57P03", true)]
    [InlineData("40001", true)]
    [InlineData("40P01", true)]
    [InlineData("08006", true)]
    [InlineData("53300", true)]
    [InlineData("23505", false)]
    [InlineData("42P01", false)]
    public void SqlStates_MapToTransient_AsDocumented(string sqlState, bool transient)
    {
        var exception = new PostgresException("message", "FATAL", "FATAL", sqlState);
        TransportErrors.IsTransient(exception).Should().Be(transient);
    }

    [PostgresFact]
    public async Task TerminatedBackend_57P01_IsTransient_AndTheNextCallSucceeds()
    {
        var application = PostgresServer.UniqueName("terminate");
        await using var transport = PostgresServer.CreateTransport(connectionString: PostgresServer.WithApplicationName(application));
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("terminated"));
        await queue.SendAsync(new byte[] { 1 }, "m1");
        (await PostgresServer.ScalarAsync("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = @a", ("a", application)))
            .Should().Be(1L, "the transport holds one idle pooled connection");

        // Waited for, not slept for: once the server has ended the backend, the pooled connection is dead at any load.
        await Bounded.UntilAsync(
            async () => (long)(await PostgresServer.ScalarAsync("SELECT count(*) FROM pg_stat_activity WHERE application_name = @a", ("a", application)))! == 0,
            Bounded.Patient,
            "the end of the terminated backend");

        var thrown = await FluentActions.Awaiting(() => queue.GetStatisticsAsync()).Should().ThrowAsync<TransientTransportException>();
        output.WriteLine(thrown.Which.Message);
        thrown.Which.InnerException.Should().BeAssignableTo<NpgsqlException>();
        (await queue.GetStatisticsAsync()).Visible.Should().Be(1, "the pool opened a new connection; nothing was lost");
    }

    [PostgresFact]
    public async Task ServerGoneMidRun_PumpRetries_AndEveryMessageCompletesOnce()
    {
        const int Messages = 40;
        var real = new NpgsqlConnectionStringBuilder(PostgresServer.Require());
        await using var proxy = new LoopbackProxy(real.Host!, real.Port);
        var throughProxy = new NpgsqlConnectionStringBuilder(real.ConnectionString) { Port = proxy.Port, Timeout = 2 }.ConnectionString;
        await using var transport = PostgresServer.CreateTransport(connectionString: throughProxy);
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("outage"), new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromSeconds(6) });
        await queue.SendBatchAsync(Enumerable.Range(0, Messages).Select(i => new PostgreSqlMessage(BitConverter.GetBytes(i), $"m{i}")));
        var handled = new ConcurrentDictionary<string, int>();

        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2 });
        await using var pump = new PriorityMessagePump(
            queue,
            async (context, cancellationToken) =>
            {
                await Task.Delay(TimeSpan.FromMilliseconds(150), cancellationToken);
                handled.AddOrUpdate(context.Message.MessageId, 1, (_, n) => n + 1);
            },
            scheduler,
            new MessagePumpOptions { MaxInFlight = 4, EmptyReceiveDelay = TimeSpan.FromMilliseconds(100), TransientRetryDelay = TimeSpan.FromMilliseconds(200), LeaseKeeper = new() { TransientRetryDelay = TimeSpan.FromMilliseconds(200) } });
        await pump.StartAsync();
        await Bounded.UntilAsync(() => Task.FromResult(handled.Count >= 10), Bounded.Patient, "10 messages handled before the outage");

        proxy.Stop();
        var thrown = await FluentActions.Awaiting(() => queue.GetStatisticsAsync()).Should().ThrowAsync<TransientTransportException>();
        output.WriteLine($"during the outage: {thrown.Which.Message}");
        await Task.Delay(TimeSpan.FromSeconds(2));
        proxy.Start();

        await Bounded.UntilAsync(async () => (await queue.GetStatisticsAsync()).Pending == 0, Bounded.Patient, "the queue to drain after the outage");
        await pump.StopAsync();
        var stats = pump.GetStatistics();
        output.WriteLine($"pump: {stats}");

        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(0, 0, 0), "every message completed; none dead-lettered or left locked");
        handled.Keys.Should().BeEquivalentTo(Enumerable.Range(0, Messages).Select(i => $"m{i}"), "nothing was lost");
        stats.Completed.Should().BeLessThanOrEqualTo(Messages);
        (stats.Completed + stats.LeasesLost).Should().BeGreaterThanOrEqualTo(Messages, "a complete whose reply was lost may count as a lost lease; the row is still gone once");
        stats.InFlight.Should().Be(0);
    }
}
