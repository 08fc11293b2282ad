using System.Globalization;
using System.Text.Json;
using LeaseSimulation.Arguments;
using LeaseSimulation.Reporting;
using LeaseSimulation.Results;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Cli;

/// <summary>
/// The command: parse, plan (the default run, the matrix or the sweep), run every row, print the table(s), write JSON
/// and the report when asked.
/// </summary>
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
        if (DefaultRunPlanner.AppliesTo(options))
        {
            return ExecuteDefault(options, args, output, error);
        }

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
            catch (Exception ex) when (options.Broker == BrokerKind.ServiceBus && ex is Azure.Messaging.ServiceBus.ServiceBusException or PriorityAsync.MessagePump.TransientTransportException or ArgumentException or UnauthorizedAccessException)
            {
                error.WriteLine($"error: {planned.Label}: the Service Bus broker failed: {ex.Message.Split('\n')[0]}");
                return 1;
            }

            results.Add(result);
            WriteRowLine(output, planned, result);
        }

        WriteTable(output, results);
        if (ServiceBusTable.ToMarkdown(results) is { Length: > 0 } serviceBus)
        {
            output.WriteLine();
            output.WriteLine("Service Bus, head to head (leases lost: deliveries whose lock was lost; duplicates: handler runs of a message beyond its first):");
            output.Write(serviceBus);
        }

        if (options.Sweep)
        {
            output.WriteLine();
            output.Write(SweepTable.ToMarkdown(results));
        }

        WriteFiles(options, args, output, results);
        return 0;
    }

    /// <summary>The default run: the seed's table on virtual time, then the real-clock demonstration with a verdict per row.</summary>
    private static int ExecuteDefault(CommandLineOptions options, IReadOnlyList<string> args, TextWriter output, TextWriter error)
    {
        DefaultRunPlan plan;
        try
        {
            plan = DefaultRunPlanner.Plan(options);
        }
        catch (OptionException ex)
        {
            error.WriteLine($"error: {ex.Message}");
            return UsageError;
        }

        var seed = plan.VirtualTime[0].Settings;
        output.WriteLine(
            $"The seed's table on one thread, virtual time (deterministic): {seed.Messages} messages (and {seed.Messages * MatrixPlanner.ScaleFactor} for priority and pump) "
            + $"of {seed.Loops} x ({string.Join(" or ", MatrixPlanner.SeedCpuTimesMs)} ms CPU, {seed.IoTime.TotalMilliseconds:0} ms awaited IO), a {seed.LeaseDuration.TotalSeconds:0.#} s lease renewed every {seed.RenewInterval.TotalSeconds:0.#} s.");
        var virtualResults = plan.VirtualTime.Select(planned => RunAndReport(planned, options, output)).ToList();
        WriteTable(output, virtualResults);

        var demo = plan.Demonstration[0].Run.Settings;
        output.WriteLine();
        output.WriteLine(
            $"Real clock, --time-scale {demo.TimeScale.ToString(CultureInfo.InvariantCulture)} (1 s of scenario time takes {1000 * demo.TimeScale:0.#} ms): {demo.Messages} messages "
            + $"of {demo.Loops} x ({demo.CpuTime.TotalMilliseconds:0} ms CPU as the seed's blocking sleep, {demo.IoTime.TotalMilliseconds:0} ms IO), same lease, "
            + "on one thread, the thread pool and the starved pool (times in scenario seconds).");
        var demoResults = plan.Demonstration.Select(row => RunAndReport(row.Run, options, output)).ToList();
        WriteTable(output, demoResults);
        output.WriteLine();
        foreach (var (row, result) in plan.Demonstration.Zip(demoResults))
        {
            output.WriteLine($"  {DemoVerdict.Judge(row, result).Text}");
        }

        output.WriteLine();
        output.WriteLine("The whole matrix (every strategy and context, conserved CPU work on the real clock): --full, 7.5 to 11 minutes on 2 cores.");
        WriteFiles(options, args, output, [.. virtualResults, .. demoResults]);
        return 0;
    }

    private static SimulationResult RunAndReport(PlannedRun planned, CommandLineOptions options, TextWriter output)
    {
        var result = RunOne(planned, options, output);
        WriteRowLine(output, planned, result);
        return result;
    }

    private static void WriteRowLine(TextWriter output, PlannedRun planned, SimulationResult result) =>
        output.WriteLine(result.LeasesLost is { } leasesLost
            ? $"  {planned.Label}: completed {result.Completed}, dead-lettered {result.DeadLettered}, leases lost {leasesLost}, duplicates {result.Duplicates}, total {result.TotalSeconds:0.0} s ({result.WallTime.TotalSeconds:0.0} s wall)"
            : $"  {planned.Label}: completed {result.Completed}, lost {result.Lost}, total {result.TotalSeconds:0.0} s ({result.WallTime.TotalSeconds:0.0} s wall)");

    private static void WriteTable(TextWriter output, IReadOnlyList<SimulationResult> results)
    {
        if (results.Count > 0 && results.All(r => r.LeasesLost is not null))
        {
            return; // Service Bus rows only: their table (ServiceBusTable) says what the broker did.
        }

        output.WriteLine();
        output.Write(ResultTable.ToMarkdown(results));
        if (results.Where(r => r.BrokerLatencyMs > 0).Select(r => r.BrokerLatencyMs).Distinct().ToList() is [var latency])
        {
            output.WriteLine($"Broker latency: {latency:0} ms on every receive, renew and settle call of the in-memory broker (pump rows; the other strategies simulate their broker calls).");
        }
    }

    private static void WriteFiles(CommandLineOptions options, IReadOnlyList<string> args, TextWriter output, IReadOnlyList<SimulationResult> results)
    {
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
