using PriorityAsync.LifecycleProbe;

// Runs one lifecycle scenario and prints "ok <scenario> ..." when the process survived it and every awaiting piece of
// code resumed. A defect shows as an abort (exit code 134 and "Unhandled exception"), a hang (the parent's timeout) or
// a "failed" line with exit code 1.
if (args.Length != 1 || !Scenarios.All.TryGetValue(args[0], out var scenario))
{
    Console.Error.WriteLine($"usage: LifecycleProbe <scenario>; scenarios: {string.Join(", ", Scenarios.All.Keys)}");
    return 2;
}

var result = await scenario();
Console.WriteLine(result.Passed ? $"ok {args[0]} {result.Detail}" : $"failed {args[0]} {result.Detail}");
return result.Passed ? 0 : 1;
