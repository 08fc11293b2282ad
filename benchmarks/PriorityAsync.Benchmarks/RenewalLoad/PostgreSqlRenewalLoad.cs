using System.Diagnostics;
using System.Globalization;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.PostgreSql;

namespace PriorityAsync.Benchmarks.RenewalLoad;

/// <summary>
/// The renewal-load cells on PostgreSQL (the server of <c>PRIORITYASYNC_POSTGRES</c>), real clock, one thread: a
/// fresh queue with 30 s locks, handlers that outlast the run, renew calls counted from 25 s after the last message was
/// received (every lease renewed once by then) for <see cref="Window"/>; the pump then stops and abandons them all.
/// </summary>
internal static class PostgreSqlRenewalLoad
{
    private static readonly TimeSpan Window = TimeSpan.FromSeconds(40);

    public static RenewalLoadCell Measure(string connectionString, int inFlight, bool native)
    {
        using var context = new PriorityAsyncContextThread();
        return context.Context.GetLane(LanePriority.Processing).Run(() => MeasureAsync(context.Context, connectionString, inFlight, native)).GetAwaiter().GetResult();
    }

    private static async Task<RenewalLoadCell> MeasureAsync(PriorityScheduler scheduler, string connectionString, int inFlight, bool native)
    {
        await using var transport = new PostgreSqlTransport(connectionString, new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.Zero });
        var name = string.Create(CultureInfo.InvariantCulture, $"renewal_load_{inFlight}_{(native ? "batch" : "single")}_{Environment.ProcessId}");
        var queue = await transport.CreateQueueAsync(name, new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        for (var sent = 0; sent < inFlight; sent += 1000)
        {
            await queue.SendBatchAsync(Enumerable.Range(0, Math.Min(1000, inFlight - sent)).Select(_ => new PostgreSqlMessage(new byte[16])));
        }

        var counter = new RenewCallCounter();
        var pump = new PriorityMessagePump(
            new CountingSource(queue, counter, native),
            (context, token) => Task.Delay(TimeSpan.FromMinutes(10), context.TimeProvider, token),
            scheduler,
            new MessagePumpOptions { MaxInFlight = inFlight, ShutdownTimeout = TimeSpan.Zero });
        await pump.StartAsync();
        while (pump.GetStatistics().Received < inFlight)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(100), scheduler.TimeProvider);
        }

        await Task.Delay(TimeSpan.FromSeconds(25), scheduler.TimeProvider);
        var (calls, leases) = (counter.Calls, counter.Leases);
        var watch = Stopwatch.StartNew();
        await Task.Delay(Window, scheduler.TimeProvider);
        var seconds = watch.Elapsed.TotalSeconds;
        var cell = new RenewalLoadCell((counter.Calls - calls) / seconds, (counter.Leases - leases) / seconds, pump.GetStatistics().LeasesLost);
        await pump.StopAsync();
        await transport.DeleteQueueAsync(name);
        return cell;
    }
}
