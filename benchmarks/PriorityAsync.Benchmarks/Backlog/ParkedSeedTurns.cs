using LeaseSimulation.Baselines;

namespace PriorityAsync.Benchmarks.Backlog;

/// <summary>
/// The seed's protocol in the setup of <see cref="ParkedPostChain"/>: on one FIFO thread, <c>backlog</c> low-priority
/// loops keep waiting for their turn while an urgent loop takes <see cref="Length"/> turns per run, then parks the
/// thread. Each urgent turn re-posts every waiting continuation once, which is the cost the benchmark shows.
/// </summary>
public sealed class ParkedSeedTurns : IDisposable
{
    private const int UrgentPriority = 3;
    private const int BacklogPriority = 1;

    private readonly SeedPriorityProtocol _protocol = new();
    private readonly ParkingGate _gate = new();

    /// <summary>Creates the loops' state; <see cref="Start"/> starts them.</summary>
    public ParkedSeedTurns(int length) => Length = length;

    /// <summary>Gets the number of urgent turns one run takes.</summary>
    public int Length { get; }

    /// <summary>Starts <paramref name="backlog"/> waiting loops and the parked urgent loop on <paramref name="context"/>.</summary>
    public void Start(SynchronizationContext context, int backlog) => context.Post(
        _ =>
        {
            for (var i = 0; i < backlog; i++)
            {
                _ = BacklogLoopAsync();
            }

            _ = UrgentLoopAsync();
        },
        null);

    /// <summary>Releases the parked thread, which takes the urgent turns and parks again.</summary>
    public void Run() => _gate.RunOnce();

    /// <summary>Stops the loops.</summary>
    public void Dispose() => _gate.Dispose();

    private async Task BacklogLoopAsync()
    {
        while (!_gate.IsStopping)
        {
            await _protocol.WaitForTurnAsync(BacklogPriority);
        }
    }

    private async Task UrgentLoopAsync()
    {
        while (_gate.Park())
        {
            for (var i = 0; i < Length; i++)
            {
                await _protocol.WaitForTurnAsync(UrgentPriority);
            }

            _gate.RunFinished();
        }
    }
}
