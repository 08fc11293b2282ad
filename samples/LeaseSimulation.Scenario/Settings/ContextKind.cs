namespace LeaseSimulation.Settings;

/// <summary>Where the consumer's continuations run.</summary>
public enum ContextKind
{
    /// <summary>
    /// One thread, like a WinForms UI thread or an asyncio loop: the FIFO strategies run on a
    /// <c>FifoSingleThreadContext</c>, the priority strategies on a <c>PriorityAsyncContext</c>.
    /// </summary>
    SingleThread,

    /// <summary>
    /// Many threads: the FIFO strategies run on the .NET thread pool, the priority strategies on a
    /// <c>PriorityTaskScheduler</c> with dedicated worker threads.
    /// </summary>
    ThreadPool,

    /// <summary>
    /// As <see cref="ThreadPool"/>, while the .NET thread pool is deliberately starved by blocking work and a low
    /// thread cap (restored afterwards).
    /// </summary>
    StarvedPool,

    /// <summary>
    /// One thread the consumer does not own (a UI thread's loop; here Nito.AsyncEx's <c>AsyncContext</c> on the real
    /// clock, a <c>FifoSingleThreadContext</c> on virtual time, which only it can drive):
    /// the FIFO strategies keep the host's order, the priority strategies use the lanes of a
    /// <c>HostedPriorityScheduler</c> hosted on that context.
    /// </summary>
    Hosted,
}
