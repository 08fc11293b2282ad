namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

/// <summary>Runs a <see cref="PriorityMessagePump"/> on one thread (<see cref="PriorityAsyncContext"/>) and the real clock until a condition holds, then stops it.</summary>
internal static class PumpRun
{
    public static MessagePumpStatistics Until(
        IMessageSource source,
        Func<MessageContext, CancellationToken, Task> handler,
        Func<bool> done,
        string what,
        MessagePumpOptions? options = null,
        Func<PriorityMessagePump, Task>? whileRunning = null,
        Microsoft.Extensions.Logging.ILogger? logger = null)
    {
        MessagePumpStatistics? statistics = null;
        PriorityAsyncContext.Run(async () =>
        {
            await using var pump = new PriorityMessagePump(source, handler, PriorityScheduler.Current!, options ?? new MessagePumpOptions { Name = "sb-test", EmptyReceiveDelay = TimeSpan.FromMilliseconds(50) }, logger);
            await pump.StartAsync();
            if (whileRunning is not null)
            {
                await whileRunning(pump);
            }

            await Bounded.UntilAsync(() => Task.FromResult(done()), SbHarness.HangBound, what, TimeSpan.FromMilliseconds(50));
            await pump.StopAsync();
            statistics = pump.GetStatistics();
        });
        return statistics!;
    }
}
