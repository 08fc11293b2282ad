using System.Diagnostics;
using Npgsql;

namespace PriorityAsync.TestKit;

/// <summary>
/// Measures how long the PostgreSQL server took to answer while a test ran: a thread of its own sends <c>SELECT 1</c>
/// on one connection every 20 ms and records the longest round trip. The server is another process, which a loaded
/// machine holds back as it holds back the test process (<see cref="PauseProbe"/> sees only the latter); a stall long
/// enough to cost a lease shows here, since a stall longer than the probe's step holds back a probe query too. A
/// real-clock test adds it to the longest pause and compares the sum with the margin its claim needs.
/// </summary>
public sealed class ServerRoundTripProbe : IDisposable
{
    private static readonly TimeSpan Step = TimeSpan.FromMilliseconds(20);
    private readonly string _connectionString;
    private readonly Thread _thread;
    private volatile bool _stopped;
    private long _longestTicks;
    private Exception? _failure;

    private ServerRoundTripProbe(string connectionString)
    {
        _connectionString = connectionString;
        _thread = new Thread(Measure) { IsBackground = true, Name = "server round-trip probe" };
        _thread.Start();
    }

    /// <summary>Gets the longest round trip so far; <see cref="TimeSpan.MaxValue"/> once a probe query failed (nothing is known then).</summary>
    public TimeSpan LongestRoundTrip => Volatile.Read(ref _failure) is not null
        ? TimeSpan.MaxValue
        : TimeSpan.FromSeconds(Volatile.Read(ref _longestTicks) / (double)Stopwatch.Frequency);

    /// <summary>Starts measuring against <paramref name="connectionString"/>.</summary>
    /// <param name="connectionString">The server's Npgsql connection string.</param>
    /// <returns>The running probe; dispose it to stop.</returns>
    public static ServerRoundTripProbe Start(string connectionString) => new(connectionString);

    /// <inheritdoc />
    public void Dispose()
    {
        _stopped = true;
        _thread.Join();
    }

    private void Measure()
    {
        try
        {
            using var connection = new NpgsqlConnection(_connectionString);
            connection.Open();
            using var command = new NpgsqlCommand("SELECT 1", connection);
            while (!_stopped)
            {
                var before = Stopwatch.GetTimestamp();
                command.ExecuteScalar();
                var took = Stopwatch.GetTimestamp() - before;
                if (took > Volatile.Read(ref _longestTicks))
                {
                    Volatile.Write(ref _longestTicks, took);
                }

                Thread.Sleep(Step);
            }
        }
        catch (Exception ex)
        {
            // Any failure (the server stopped, a socket error) means nothing is known: the claim is not asserted. A
            // failure must not escape: an exception on this thread would end the test process.
            Volatile.Write(ref _failure, ex);
        }
    }
}
