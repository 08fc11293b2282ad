using PriorityAsync.MessagePump;

namespace PriorityAsync.TestKit;

/// <summary>
/// The seed article's consumer: no lanes (everything in one FIFO lane), greedy receive, a lease keeper that renews
/// every <c>renewEvery</c>, and the handler; complete at the end.
/// </summary>
/// <param name="source">Where the messages come from.</param>
/// <param name="handler">The work of one message, given the clock and a token.</param>
/// <param name="time">The clock of the renewals and of the wait after an empty receive.</param>
/// <param name="renewEvery">How often the lease keeper renews.</param>
public sealed class NaiveConsumer(IMessageSource source, Func<TimeProvider, CancellationToken, Task> handler, TimeProvider time, TimeSpan renewEvery)
{
    private readonly List<Task> _running = [];

    /// <summary>Gets how many times the handler started.</summary>
    public int HandlerRuns { get; private set; }

    /// <summary>Gets how many completions failed because the lease was lost.</summary>
    public int CompleteLeaseLost { get; private set; }

    /// <summary>Receives and handles until <paramref name="done"/> says so, then waits for the handlers still running.</summary>
    /// <param name="done">Whether to stop receiving.</param>
    /// <returns>A task that ends when every handler has.</returns>
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
