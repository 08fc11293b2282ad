namespace PriorityAsync.MessagePump;

/// <summary>
/// How many messages the next receive asks for. The receive lane decides <em>when</em> to ask (only when nothing more
/// urgent is ready: the consumer has spare capacity); this decides <em>how many</em>, from what the last receive saw:
/// <list type="bullet">
/// <item>After the broker answered, the receive lane ran again once the batch's keepers and first handler slices (and
/// anything else more urgent) had run. When that wait was longer than four round trips of the receive, the consumer's
/// work outweighs the broker's latency: a bigger batch would save little and admit more than the consumer has room
/// for, so the ask halves.</item>
/// <item>When the consumer was free again within four round trips and the broker filled the whole ask, the round trip
/// still limits the consumer, so the ask doubles (up to the batch limit).</item>
/// <item>A short batch (the queue ran low) or an empty one leaves the ask as it is.</item>
/// </list>
/// The ask starts at 1 and never exceeds the free in-flight slots. Multiplicative steps both ways keep it within a
/// factor of two of the size at which a batch's work equals four round trips, without oscillating beyond that.
/// </summary>
internal sealed class ReceiveAdmission
{
    /// <summary>
    /// How many round trips of work a batch may bring before the ask halves. At the equilibrium a batch's work is this
    /// many round trips, so a consumer that waits for each answer is busy k / (k + 1) of the time (80 %).
    /// </summary>
    private const int RoundTripsOfWork = 4;

    private readonly int _maxBatchSize;
    private int _ask = 1;

    public ReceiveAdmission(int maxBatchSize) => _maxBatchSize = maxBatchSize;

    /// <summary>Gets the current ask, before the in-flight limit.</summary>
    internal int Ask => Volatile.Read(ref _ask);

    /// <summary>Returns how many messages to ask for, given the free in-flight slots (at least 1).</summary>
    public int NextAsk(int freeSlots) => Math.Min(Ask, freeSlots);

    /// <summary>Adapts the ask to what one receive saw.</summary>
    /// <param name="asked">How many messages the receive asked for.</param>
    /// <param name="received">How many the broker returned.</param>
    /// <param name="roundTrip">From the call to the broker's answer.</param>
    /// <param name="wait">From the answer to the receive lane running again.</param>
    public void Observe(int asked, int received, TimeSpan roundTrip, TimeSpan wait)
    {
        if (received == 0)
        {
            return;
        }

        if (wait > RoundTripsOfWork * roundTrip)
        {
            Volatile.Write(ref _ask, Math.Max(1, _ask / 2));
        }
        else if (received >= asked && asked >= _ask)
        {
            Volatile.Write(ref _ask, (int)Math.Min(_maxBatchSize, 2L * _ask));
        }
    }
}
