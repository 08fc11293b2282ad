using System.Text.Json;
using LeaseSimulation.Arguments;
using LeaseSimulation.Reporting;
using LeaseSimulation.Results;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Cli;

/// <summary>The command: parse, plan, run every row, print one table, write JSON and the report when asked.</summary>
public static class SimulationCommand
{
    /// <summary>The exit code of a bad command line.</summary>
    public const int UsageError = CommandLineRunner.UsageError;

    /// <summary>Runs the command.</summary>
    /// <param name="args">The command-line arguments.</param>
    /// <param name="output">Where the help, the table and monitor lines go.</param>
    /// <param name="error">Where errors go.</param>
    /// <returns>0 on success or after <c>--help</c>, 2 on a bad command line, 1 when a run failed.</returns>
    public static int Execute(IReadOnlyList<string> args, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        var definition = new SimulationOptions();
        var command = definition.CreateCommand();
        command.SetAction(parseResult => Execute(definition.Read(parseResult), args, output, error));
        return CommandLineRunner.Run(command, args, output, error);
    }

    /// <summary>Parses <paramref name="args"/> into the options, without planning or running anything.</summary>
    /// <param name="args">The command-line arguments.</param>
    /// <returns>The options.</returns>
    /// <exception cref="OptionException">An option is unknown, repeated, lacks its value or has a bad value.</exception>
    public static CommandLineOptions Parse(IReadOnlyList<string> args)
    {
        var definition = new SimulationOptions();
        var parseResult = CommandLineRunner.Parse(definition.CreateCommand(), args);
        return CommandLineRunner.FirstError(parseResult) is { } bad
            ? throw new OptionException(bad.Option, bad.Message)
            : definition.Read(parseResult);
    }

    private static int Execute(CommandLineOptions options, IReadOnlyList<string> args, TextWriter output, TextWriter error)
    {
        IReadOnlyList<PlannedRun> plan;
        try
        {
            plan = options.Sweep ? SweepPlanner.Plan(options) : MatrixPlanner.Plan(options);
        }
        catch (OptionException ex)
        {
            error.WriteLine($"error: {ex.Message}");
            return UsageError;
        }

        var results = new List<SimulationResult>();
        foreach (var planned in plan)
        {
            SimulationResult result;
            try
            {
                result = RunOne(planned, options, output);
            }
            catch (Exception ex) when (options.Broker == BrokerKind.Postgres && ex is PriorityAsync.MessagePump.TransientTransportException or ArgumentException or Npgsql.NpgsqlException)
            {
                error.WriteLine($"error: {planned.Label}: the PostgreSQL broker failed: {ex.Message.Split('\n')[0]}");
                return 1;
            }

            results.Add(result);
            output.WriteLine($"  {planned.Label}: completed {result.Completed}, lost {result.Lost}, total {result.TotalSeconds:0.0} s ({result.WallTime.TotalSeconds:0.0} s wall)");
        }

        output.WriteLine();
        output.Write(ResultTable.ToMarkdown(results));
        if (results.Where(r => r.BrokerLatencyMs > 0).Select(r => r.BrokerLatencyMs).Distinct().ToList() is [var latency])
        {
            output.WriteLine($"Broker latency: {latency:0} ms on every receive, renew and settle call of the in-memory broker (pump rows; the other strategies simulate their broker calls).");
        }

        if (options.Sweep)
        {
            output.WriteLine();
            output.Write(SweepTable.ToMarkdown(results));
        }

        if (options.JsonPath is { } jsonPath)
        {
            WriteJson(jsonPath, results);
            output.WriteLine($"JSON: {jsonPath}");
        }

        if (options.Sweep && options.ReportDirectory is { } sweepDirectory)
        {
            output.WriteLine($"Sweep report: {SweepReport.Write(sweepDirectory, results, string.Join(' ', args))}");
        }
        else if (options.ReportDirectory is { } reportDirectory)
        {
            var reportPath = SimulationReport.Write(reportDirectory, results, string.Join(' ', args));
            output.WriteLine($"Report: {reportPath}");
        }

        return 0;
    }

    private static SimulationResult RunOne(PlannedRun planned, CommandLineOptions options, TextWriter output)
    {
        SimulationResult Run(Action<ScenarioRun> started) =>
            SimulationRunner.Run(planned.Settings, planned.Strategy, run =>
            {
                if (options.Monitor)
                {
                    run.Tracker.Sampled += sample =>
                    {
                        lock (output)
                        {
                            output.WriteLine($"  {planned.Label} {sample}");
                        }
                    };
                }

                started(run);
            });

        var live = planned.Settings.Clock == ClockKind.Real && !options.NoProgress && !options.Monitor && !Console.IsOutputRedirected;
        return live ? ProgressDisplay.Show(planned, Run) : Run(static _ => { });
    }

    private static void WriteJson(string path, IReadOnlyList<SimulationResult> results)
    {
        var directory = Path.GetDirectoryName(Path.GetFullPath(path));
        if (!string.IsNullOrEmpty(directory))
        {
            Directory.CreateDirectory(directory);
        }

        File.WriteAllText(path, JsonSerializer.Serialize(results, SimulationJsonContext.Default.IReadOnlyListSimulationResult));
    }
}
