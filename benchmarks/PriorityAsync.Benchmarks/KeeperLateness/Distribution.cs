using System.Globalization;

namespace PriorityAsync.Benchmarks.KeeperLateness;

/// <summary>A sample in milliseconds, summarised as min / median / p99 / max (nearest rank).</summary>
internal sealed class Distribution
{
    private readonly double[] _sorted;

    public Distribution(double[] sample)
    {
        _sorted = sample;
        Array.Sort(_sorted);
    }

    /// <summary>Gets the size of the sample.</summary>
    public int Count => _sorted.Length;

    /// <summary>Formats the sample as "min / median / p99 / max" in milliseconds, or "none".</summary>
    public override string ToString() => _sorted.Length == 0
        ? "none"
        : string.Create(CultureInfo.InvariantCulture, $"{_sorted[0]:0.0} / {Rank(0.5):0.0} / {Rank(0.99):0.0} / {_sorted[^1]:0.0}");

    /// <summary>Formats the sample as "min / median" in milliseconds, or "none".</summary>
    public string ToShortString() => _sorted.Length == 0
        ? "none"
        : string.Create(CultureInfo.InvariantCulture, $"{_sorted[0]:0.0} / {Rank(0.5):0.0}");

    private double Rank(double fraction) =>
        _sorted[Math.Clamp((int)Math.Ceiling(fraction * _sorted.Length) - 1, 0, _sorted.Length - 1)];
}
