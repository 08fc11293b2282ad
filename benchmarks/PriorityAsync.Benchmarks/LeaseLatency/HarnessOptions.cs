using System.Globalization;

namespace PriorityAsync.Benchmarks.LeaseLatency;

/// <summary>Reads the numeric options of the real-time harnesses.</summary>
internal static class HarnessOptions
{
    /// <summary>Returns the number after <paramref name="name"/>, or <see langword="null"/> when the option is absent.</summary>
    public static double? Read(string[] args, string name)
    {
        var index = Array.IndexOf(args, name);
        return index >= 0 && index + 1 < args.Length
            ? double.Parse(args[index + 1], CultureInfo.InvariantCulture)
            : null;
    }
}
