namespace PriorityAsync.MessagePump;

/// <summary>
/// A cancellation token whose source is made only when someone asks for the token (most messages end without anyone
/// asking), for an event its owner records itself (a flag): <see cref="Token"/> cancels a source made after the event
/// at once, <see cref="Cancel"/> one made before it. Canceled in place, on the caller's thread: the lease lane, where
/// <c>CancelAsync</c> would resume the waiting code (the keeper, the stop path) on the thread pool instead. Used as a
/// mutable field of its owner (a lease's lost token, a delivery's settle abort), never copied.
/// </summary>
internal struct LazyCancellation
{
    private CancellationTokenSource? _source;

    /// <summary>Gets the token, making its source on the first call; canceled when <paramref name="happened"/> (the event came before the source).</summary>
    /// <param name="happened">Whether the owner has recorded the event.</param>
    /// <returns>The token.</returns>
    public CancellationToken Token(bool happened)
    {
        var source = Volatile.Read(ref _source);
        if (source is null)
        {
            var created = new CancellationTokenSource();
            source = Interlocked.CompareExchange(ref _source, created, null) ?? created;
        }

        if (happened)
        {
            CancelInPlace(source);
        }

        return source.Token;
    }

    /// <summary>Cancels the token if its source was made; call after recording the event, so that a source made later is canceled by <see cref="Token"/>.</summary>
    public void Cancel()
    {
        if (Volatile.Read(ref _source) is { } source)
        {
            CancelInPlace(source);
        }
    }

    private static void CancelInPlace(CancellationTokenSource source)
    {
        try
        {
#pragma warning disable VSTHRD103 // in place, on purpose: see the type's summary
            source.Cancel();
#pragma warning restore VSTHRD103
        }
        catch (AggregateException)
        {
            // A callback registered by the token's user threw; that user sees the cancellation anyway.
        }
    }
}
