using System.Diagnostics;
using System.Runtime.InteropServices;
using PostgreSqlConsumer;
using PriorityAsync;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.PostgreSql;

var (parsed, exitCode) = ConsumerOptions.Parse(args, Console.Out, Console.Error);
if (parsed is not { } options)
{
    return exitCode;
}

using var stop = new CancellationTokenSource();
using var onTerm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context => { context.Cancel = true; stop.Cancel(); });
using var onInt = PosixSignalRegistration.Create(PosixSignal.SIGINT, context => { context.Cancel = true; stop.Cancel(); });

try
{
    await using var transport = new PostgreSqlTransport(options.ConnectionString);
    var queue = await transport.CreateQueueAsync(
        options.Queue,
        new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromMilliseconds(options.LockMs), MaxDeliveryCount = options.MaxDeliveries });

    MessagePumpStatistics? statistics = null;
    PriorityAsyncContext.Run(async () =>
    {
        await using var pump = new PriorityMessagePump(
            queue,
            async (context, cancellationToken) =>
            {
                var message = (PostgreSqlLeasedMessage)context.Message;
                Console.Out.WriteLine($"start {message.MessageId} {message.DeliveryCount} {message.LockToken} {DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()}");
                if (options.PoisonPrefix is { Length: > 0 } prefix && message.MessageId.StartsWith(prefix, StringComparison.Ordinal))
                {
                    throw new InvalidOperationException($"{message.MessageId} is a poison message.");
                }

                await Task.Delay(options.IoMs, cancellationToken);
                var until = Stopwatch.GetTimestamp() + (options.CpuMs * Stopwatch.Frequency / 1000);
#pragma warning disable PA0001 // one chunk of --cpu-ms (1 ms by default) of CPU work, the handler's whole slice: the pump yields between messages
                while (Stopwatch.GetTimestamp() < until)
                {
                    Thread.SpinWait(100);
                }
#pragma warning restore PA0001
            },
            PriorityScheduler.Current!,
            new MessagePumpOptions
            {
                Name = $"pg-consumer-{Environment.ProcessId}",
                MaxInFlight = options.MaxInFlight,
                EmptyReceiveDelay = TimeSpan.FromMilliseconds(100),
                TransientRetryDelay = TimeSpan.FromMilliseconds(200),
                ShutdownTimeout = TimeSpan.FromSeconds(5),
            });
        await pump.StartAsync();
        Console.Out.WriteLine($"ready {Environment.ProcessId}");
        try
        {
            await Task.Delay(Timeout.InfiniteTimeSpan, stop.Token);
        }
        catch (OperationCanceledException)
        {
        }

        await pump.StopAsync();
        statistics = pump.GetStatistics();
    });

    Console.Out.WriteLine($"stopped {statistics}");
    return 0;
}
catch (ArgumentException ex)
{
    Console.Error.WriteLine(ex.Message);
    return 2;
}
catch (TransientTransportException ex)
{
    Console.Error.WriteLine($"The database is unreachable: {ex.Message}");
    return 3;
}
