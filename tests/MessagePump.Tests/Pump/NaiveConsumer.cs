namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// The seed article's consumer: no lanes (everything in one FIFO lane), greedy receive, a lease keeper that renews
/// every <c>renewEvery</c>, and the handler; complete at the end.
/// </summary>
internal sealed class NaiveConsumer(IMessageSource source, Func<TimeProvider, CancellationToken, Task> handler, TimeProvider time, TimeSpan renewEvery)
{
    private readonly List<Task> _running = [];

    public int HandlerRuns { get; private set; }

    public int CompleteLeaseLost { get; private set; }

    public async Task RunAsync(Func<bool> done)
    {
        while (!done())
        {
            var message = await source.ReceiveAsync();
            if (message is null)
            {
                await Task.Delay(TimeSpan.FromSeconds(1), time);
                continue;
            }

            _running.Add(HandleAsync(message));
            await Task.Yield();
        }

        await Task.WhenAll(_running);
    }

    private async Task HandleAsync(ILeasedMessage message)
    {
        using var stopKeeper = new CancellationTokenSource();
        var keeper = KeepLeaseAsync(message, stopKeeper.Token);
        try
        {
            HandlerRuns++;
            await handler(time, CancellationToken.None);
            await message.CompleteAsync();
        }
        catch (LeaseLostException)
        {
            CompleteLeaseLost++;
        }
        finally
        {
            stopKeeper.Cancel();
            await keeper;
        }
    }

    private async Task KeepLeaseAsync(ILeasedMessage message, CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                await Task.Delay(renewEvery, time, cancellationToken);
                await message.RenewLockAsync(CancellationToken.None);
            }
        }
        catch (OperationCanceledException)
        {
        }
        catch (LeaseLostException)
        {
        }
    }
}
