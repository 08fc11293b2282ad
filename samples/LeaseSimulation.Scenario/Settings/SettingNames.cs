namespace LeaseSimulation.Settings;

/// <summary>The command-line spellings of contexts, clocks and CPU modes.</summary>
public static class SettingNames
{
    /// <summary>Gets the spelling of a context (<c>single-thread</c>, <c>thread-pool</c>, <c>starved-pool</c>, <c>hosted</c>).</summary>
    /// <param name="context">The context.</param>
    /// <returns>The spelling.</returns>
    public static string Of(ContextKind context) => context switch
    {
        ContextKind.SingleThread => "single-thread",
        ContextKind.ThreadPool => "thread-pool",
        ContextKind.StarvedPool => "starved-pool",
        ContextKind.Hosted => "hosted",
        _ => throw new ArgumentOutOfRangeException(nameof(context), context, "Unknown context."),
    };

    /// <summary>Gets the spelling of a clock (<c>virtual</c>, <c>real</c>).</summary>
    /// <param name="clock">The clock.</param>
    /// <returns>The spelling.</returns>
    public static string Of(ClockKind clock) => clock switch
    {
        ClockKind.Virtual => "virtual",
        ClockKind.Real => "real",
        _ => throw new ArgumentOutOfRangeException(nameof(clock), clock, "Unknown clock."),
    };

    /// <summary>Gets the spelling of a broker (<c>memory</c>, <c>postgres</c>, <c>servicebus</c>).</summary>
    /// <param name="broker">The broker.</param>
    /// <returns>The spelling.</returns>
    public static string Of(BrokerKind broker) => broker switch
    {
        BrokerKind.Memory => "memory",
        BrokerKind.Postgres => "postgres",
        BrokerKind.ServiceBus => "servicebus",
        _ => throw new ArgumentOutOfRangeException(nameof(broker), broker, "Unknown broker."),
    };

    /// <summary>Gets the spelling of a CPU mode (<c>sleep</c>, <c>spin</c>, <c>work</c>).</summary>
    /// <param name="mode">The CPU mode.</param>
    /// <returns>The spelling.</returns>
    public static string Of(CpuMode mode) => mode switch
    {
        CpuMode.Sleep => "sleep",
        CpuMode.Spin => "spin",
        CpuMode.Work => "work",
        _ => throw new ArgumentOutOfRangeException(nameof(mode), mode, "Unknown CPU mode."),
    };

    /// <summary>Parses a context spelling.</summary>
    /// <param name="text">The spelling.</param>
    /// <param name="context">The context.</param>
    /// <returns>Whether the spelling is known.</returns>
    public static bool TryParseContext(string text, out ContextKind context)
    {
        foreach (var candidate in Enum.GetValues<ContextKind>())
        {
            if (string.Equals(Of(candidate), text, StringComparison.OrdinalIgnoreCase))
            {
                context = candidate;
                return true;
            }
        }

        context = default;
        return false;
    }
}
