using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Internal;

/// <summary>
/// Opens a receiver's <c>$management</c> link once, ahead of the first lock renewal. The SDK opens that link lazily,
/// at the first call that needs it (a renewal), and opening it takes two round trips of its own (a CBS token, then the
/// attach): on a starved thread pool each answer waits for a pool thread, so that first renewal reached the broker
/// after short locks had run out. A peek past the last sequence number opens the link and returns nothing. A failure is
/// left to the calls that need the link: they open it again and report their own error. A session receiver opens it
/// with a renewal of the session lock instead (<paramref name="opener"/>): the call that opens the link then also moves
/// the lock, which an accept on a starved pool hands over with part of it gone. Thread-safe.
/// </summary>
/// <param name="receiver">The receiver whose link is opened.</param>
/// <param name="opener">Opens the link with a call of its own (<see langword="null"/>: the peek, <see cref="PeekNothingAsync"/>).</param>
internal sealed class ManagementLink(ServiceBusReceiver receiver, Func<Task>? opener = null)
{
    private Task? _opened;

    /// <summary>Starts opening the link on the first call; every call returns the same task, which never faults.</summary>
    /// <returns>A task that completes when the link is open, or when opening it failed.</returns>
    public Task OpenAsync()
    {
        if (Volatile.Read(ref _opened) is { } opened)
        {
            return opened;
        }

        var opening = OpenOnceAsync();
        return Interlocked.CompareExchange(ref _opened, opening, null) ?? opening;
    }

    /// <summary>
    /// Forgets the last opening, so that the next <see cref="OpenAsync"/> opens the link again: called when the entity
    /// was missing (the link could not open), so that the entity created later gets its link ahead of the first renewal.
    /// </summary>
    public void Reset() => Volatile.Write(ref _opened, null);

    private async Task OpenOnceAsync()
    {
        try
        {
            await (opener?.Invoke() ?? PeekNothingAsync(receiver)).ConfigureAwait(true);
        }
#pragma warning disable CA1031 // opening the link ahead is an optimisation: the calls that need it open it again and report their own failure
        catch (Exception)
#pragma warning restore CA1031
        {
        }
    }

    /// <summary>Peeks past the last sequence number: opens the link, returns nothing.</summary>
    /// <param name="receiver">The receiver whose link is opened.</param>
    /// <returns>The peek.</returns>
    public static Task PeekNothingAsync(ServiceBusReceiver receiver) => receiver.PeekMessageAsync(long.MaxValue, CancellationToken.None);
}
