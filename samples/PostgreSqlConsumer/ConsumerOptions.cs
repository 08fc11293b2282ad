using System.CommandLine;
using System.CommandLine.Parsing;

namespace PostgreSqlConsumer;

/// <summary>The consumer's command line, on System.CommandLine like the other samples.</summary>
internal sealed record ConsumerOptions
{
    /// <summary>The exit code of a bad command line.</summary>
    public const int UsageError = 2;

    public string ConnectionString { get; init; } = "";

    public string Queue { get; init; } = "";

    public int LockMs { get; init; } = 30_000;

    public int MaxDeliveries { get; init; } = 10;

    public int IoMs { get; init; } = 10;

    public int CpuMs { get; init; } = 1;

    public string? PoisonPrefix { get; init; }

    public int MaxInFlight { get; init; } = 8;

    /// <summary>
    /// Parses <paramref name="args"/>: the options, or <see langword="null"/> with the exit code when the program should
    /// end at once (0 after <c>--help</c>; 2 after a bad command line, with one line on standard error naming the option).
    /// </summary>
    public static (ConsumerOptions? Options, int ExitCode) Parse(string[] args, TextWriter output, TextWriter error)
    {
        var connection = new Option<string>("--connection")
        {
            Description = "Npgsql connection string (default: $PRIORITYASYNC_POSTGRES).",
            DefaultValueFactory = _ => Environment.GetEnvironmentVariable("PRIORITYASYNC_POSTGRES") ?? "",
        };
        var queue = new Option<string>("--queue") { Description = "The queue to consume (created if missing, with --lock-ms and --max-deliveries).", Required = true };
        var lockMs = Number("--lock-ms", "Lock duration of a created queue, in ms.", 30_000);
        var maxDeliveries = Number("--max-deliveries", "Max delivery count of a created queue.", 10);
        var ioMs = Number("--io-ms", "Awaited I/O per message, in ms.", 10);
        var cpuMs = Number("--cpu-ms", "CPU per message, in ms.", 1);
        var poisonPrefix = new Option<string?>("--poison-prefix") { Description = "The handler throws for message ids starting with this prefix (default: none)." };
        var maxInFlight = Number("--max-in-flight", "The pump's MaxInFlight.", 8);
        var command = new RootCommand(
            "A PriorityMessagePump consumer on the PostgreSQL transport, on one thread. Prints one line per handler start: "
            + "\"start <messageId> <deliveryCount> <lockToken> <unixTimeMs>\". SIGTERM or Ctrl+C stops gracefully: no more "
            + "receives, messages in flight finish or are abandoned; exit code 0.")
        {
            connection, queue, lockMs, maxDeliveries, ioMs, cpuMs, poisonPrefix, maxInFlight,
        };

        var result = command.Parse(args, new ParserConfiguration { ResponseFileTokenReplacer = null });
        if (result.Action is not null && result.Errors.Count == 0)
        {
            result.Invoke(new InvocationConfiguration { Output = output, Error = error }); // --help
            return (null, 0);
        }

        if (result.Errors.Count > 0)
        {
            error.WriteLine($"error: {result.Errors[0].Message.Split('\n')[0]}");
            return (null, UsageError);
        }

        return (new ConsumerOptions
        {
            ConnectionString = result.GetValue(connection)!,
            Queue = result.GetValue(queue)!,
            LockMs = result.GetValue(lockMs),
            MaxDeliveries = result.GetValue(maxDeliveries),
            IoMs = result.GetValue(ioMs),
            CpuMs = result.GetValue(cpuMs),
            PoisonPrefix = result.GetValue(poisonPrefix),
            MaxInFlight = result.GetValue(maxInFlight),
        }, 0);
    }

    private static Option<int> Number(string name, string description, int defaultValue) => new(name)
    {
        Description = $"{description} Default {defaultValue}.",
        DefaultValueFactory = _ => defaultValue,
        CustomParser = result =>
        {
            // One parser for both rules: a value that is not a number must not reach a validator (it would throw).
            if (int.TryParse(result.Tokens[0].Value, System.Globalization.NumberStyles.Integer, System.Globalization.CultureInfo.InvariantCulture, out var value) && value >= 0)
            {
                return value;
            }

            result.AddError($"Option {name} needs a non-negative integer.");
            return 0;
        },
    };
}
