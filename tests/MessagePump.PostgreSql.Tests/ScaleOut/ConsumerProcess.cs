using System.Collections.Concurrent;
using System.Diagnostics;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.ScaleOut;

/// <summary>One <c>samples/PostgreSqlConsumer</c> process, with its output lines collected.</summary>
internal sealed class ConsumerProcess : IDisposable
{
    private readonly Process _process;
    private readonly ConcurrentQueue<string> _lines = new();
    private readonly ConcurrentQueue<string> _errors = new();

    private ConsumerProcess(string name, Process process)
    {
        Name = name;
        _process = process;
        _process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                _lines.Enqueue(e.Data);
            }
        };
        _process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                _errors.Enqueue(e.Data);
            }
        };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    public string Name { get; }

    public int Id => _process.Id;

    public bool HasExited => _process.HasExited;

    public int ExitCode => _process.ExitCode;

    public IReadOnlyList<string> Lines => [.. _lines];

    public string Errors => string.Join('\n', _errors);

    /// <summary>Gets the handler starts the process printed: (message id, delivery count, lock token, local time).</summary>
    public IReadOnlyList<(string MessageId, int Delivery, Guid LockToken, DateTimeOffset At)> Starts =>
        [.. _lines.Where(l => l.StartsWith("start ", StringComparison.Ordinal)).Select(l => l.Split(' ')).Select(p =>
            (p[1], int.Parse(p[2], System.Globalization.CultureInfo.InvariantCulture), Guid.Parse(p[3]), DateTimeOffset.FromUnixTimeMilliseconds(long.Parse(p[4], System.Globalization.CultureInfo.InvariantCulture))))];

    public static ConsumerProcess Start(string name, string connectionString, IEnumerable<string> arguments)
    {
        var startInfo = new ProcessStartInfo(Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host ? host : "dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        startInfo.ArgumentList.Add(ConsumerDll());
        foreach (var argument in arguments)
        {
            startInfo.ArgumentList.Add(argument);
        }

        startInfo.Environment["PRIORITYASYNC_POSTGRES"] = connectionString; // not on the command line: it holds a password
        return new ConsumerProcess(name, Process.Start(startInfo) ?? throw new InvalidOperationException("dotnet did not start."));
    }

    public async Task WaitReadyAsync(TimeSpan limit)
    {
        var deadline = DateTime.UtcNow + limit;
        while (!_lines.Any(l => l.StartsWith("ready ", StringComparison.Ordinal)))
        {
            if (_process.HasExited || DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"{Name} did not get ready within {limit} (exited: {_process.HasExited}); stderr: {Errors}");
            }

            await Task.Delay(50);
        }
    }

    /// <summary>SIGKILL: the process dies at once, its locks stay until they expire.</summary>
    public void KillHard() => _process.Kill();

    /// <summary>SIGTERM: the process stops gracefully.</summary>
    public void Terminate() => Signal("-TERM");

    /// <summary>SIGSTOP: the process is frozen (it runs nothing, sends nothing) until <see cref="Thaw"/>.</summary>
    public void Freeze() => Signal("-STOP");

    /// <summary>SIGCONT: a frozen process runs on.</summary>
    public void Thaw() => Signal("-CONT");

    private void Signal(string signal)
    {
        using var kill = Process.Start("kill", [signal, _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        kill.WaitForExit();
    }

    public async Task WaitForExitAsync(TimeSpan limit)
    {
        using var timeout = new CancellationTokenSource(limit);
        try
        {
            await _process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"{Name} did not exit within {limit}; stderr: {Errors}");
        }
    }

    public void Dispose()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit(5000);
            }
        }
        catch (InvalidOperationException)
        {
        }

        _process.Dispose();
    }

    internal static string ConsumerDll()
    {
        // The test binaries live in tests/<project>/bin/<Configuration>/<tfm>/; the sample is built with the same configuration.
        var tfmDirectory = new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar));
        var configuration = tfmDirectory.Parent!.Name;
        var path = Path.Combine(RepositoryRoot.Find(), "samples", "PostgreSqlConsumer", "bin", configuration, tfmDirectory.Name, "PostgreSqlConsumer.dll");
        return File.Exists(path) ? path : throw new FileNotFoundException($"Build samples/PostgreSqlConsumer ({configuration}) first.", path);
    }
}
