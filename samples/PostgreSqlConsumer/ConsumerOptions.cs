using System.Globalization;

namespace PostgreSqlConsumer;

/// <summary>The consumer's command line.</summary>
internal sealed record ConsumerOptions
{
    public const string Usage = """
        usage: PostgreSqlConsumer --queue <name> [options]
          --connection <string>   Npgsql connection string (default: $PRIORITYASYNC_POSTGRES)
          --queue <name>          the queue to consume (created if missing, with --lock-ms and --max-deliveries)
          --lock-ms <n>           lock duration of a created queue, in ms (default 30000)
          --max-deliveries <n>    max delivery count of a created queue (default 10)
          --io-ms <n>             awaited I/O per message, in ms (default 10)
          --cpu-ms <n>            CPU per message, in ms (default 1)
          --poison-prefix <p>     the handler throws for message ids starting with <p> (default: none)
          --max-in-flight <n>     the pump's MaxInFlight (default 8)
        Prints one line per handler start: "start <messageId> <deliveryCount> <lockToken> <unixTimeMs>".
        SIGTERM or Ctrl+C stops gracefully: no more receives, messages in flight finish or are abandoned; exit code 0.
        """;

    public string ConnectionString { get; init; } = Environment.GetEnvironmentVariable("PRIORITYASYNC_POSTGRES") ?? "";

    public string Queue { get; init; } = "";

    public int LockMs { get; init; } = 30_000;

    public int MaxDeliveries { get; init; } = 10;

    public int IoMs { get; init; } = 10;

    public int CpuMs { get; init; } = 1;

    public string? PoisonPrefix { get; init; }

    public int MaxInFlight { get; init; } = 8;

    public static ConsumerOptions Parse(string[] args)
    {
        var options = new ConsumerOptions();
        for (var i = 0; i < args.Length; i++)
        {
            var name = args[i];
            string Value() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{name} needs a value.", nameof(args));
            int Number() => int.TryParse(Value(), NumberStyles.Integer, CultureInfo.InvariantCulture, out var n) && n >= 0
                ? n
                : throw new ArgumentException($"{name} needs a non-negative integer.", nameof(args));
            options = name switch
            {
                "--connection" => options with { ConnectionString = Value() },
                "--queue" => options with { Queue = Value() },
                "--lock-ms" => options with { LockMs = Number() },
                "--max-deliveries" => options with { MaxDeliveries = Number() },
                "--io-ms" => options with { IoMs = Number() },
                "--cpu-ms" => options with { CpuMs = Number() },
                "--poison-prefix" => options with { PoisonPrefix = Value() },
                "--max-in-flight" => options with { MaxInFlight = Number() },
                _ => throw new ArgumentException($"Unknown option {name}.", nameof(args)),
            };
        }

        return options;
    }
}
