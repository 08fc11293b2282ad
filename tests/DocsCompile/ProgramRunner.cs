using System.Reflection;
using System.Runtime.Loader;

namespace PriorityAsync.DocsCompile;

/// <summary>
/// Runs a compiled program in this process, on a thread of its own, with its console output captured. A program that
/// throws or returns a non-zero exit code fails; one that has not returned within the limit fails as a hang (the limit
/// turns a hang into a failure; it is far above what any sample needs and asserts no speed).
/// </summary>
internal static class ProgramRunner
{
    public static (bool Finished, string? Failure, string Output) Run(string name, byte[] assembly, TimeSpan limit)
    {
        var context = new AssemblyLoadContext(name);
        using var stream = new MemoryStream(assembly);
        var entryPoint = context.LoadFromStream(stream).EntryPoint
            ?? throw new InvalidOperationException($"{name} has no entry point");
        var output = new StringWriter();
        var previousOut = Console.Out;
        var previousError = Console.Error;
        string? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                var parameters = entryPoint.GetParameters().Length == 0 ? null : new object[] { Array.Empty<string>() };
                var exitCode = entryPoint.Invoke(null, parameters) is int code ? code : 0;
                if (exitCode != 0)
                {
                    failure = $"exit code {exitCode}";
                }
            }
            catch (TargetInvocationException exception)
            {
                failure = $"threw {exception.InnerException}";
            }
        })
        {
            Name = name,
            IsBackground = true,
        };

        var writer = TextWriter.Synchronized(output);
        Console.SetOut(writer);
        Console.SetError(writer);
        try
        {
            thread.Start();
            if (!thread.Join(limit))
            {
                return (false, $"still running after {limit.TotalSeconds:0} s: a hang, or a program that never ends", output.ToString());
            }
        }
        finally
        {
            Console.SetOut(previousOut);
            Console.SetError(previousError);
        }

        return (true, failure, output.ToString());
    }
}
