namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

/// <summary>Runs a <see cref="PriorityMessagePump"/> on one thread (<see cref="PriorityAsyncContext"/>) and the real clock until a condition holds, then stops it.</summary>
/// <remarks>
/// The context runs on a thread of its own, never on the caller's: a test that awaited an SDK call may be running on
/// the thread that reads the client's AMQP connection (the SDK completes some awaits inline there), and blocking that
/// thread for the pump's whole run would stall every frame the client reads — the transfers, the drain's answer and the
/// session-lock renewals (the test broker's README, "A test that blocks a thread after awaiting the client").
/// </remarks>
internal static class PumpRun
{
    public static Task<MessagePumpStatistics> UntilAsync(
        IMessageSource source,
        Func<MessageContext, CancellationToken, Task> handler,
        Func<bool> done,
        string what,
        MessagePumpOptions? options = null,
        Func<PriorityMessagePump, Task>? whileRunning = null,
        Microsoft.Extensions.Logging.ILogger? logger = null) =>
        Task.Factory.StartNew(
            () =>
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
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default);
}
