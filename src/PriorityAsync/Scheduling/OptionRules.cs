namespace PriorityAsync;

/// <summary>
/// The rules that options classes of every PriorityAsync package check, with one wording: each exception names the
/// option (as its parameter name and as <c>Owner.Option</c> in the message) and the rule it breaks.
/// </summary>
internal static class OptionRules
{
    /// <summary>Throws unless <paramref name="value"/> is a positive delay a .NET timer accepts; <see langword="null"/> passes.</summary>
    /// <param name="value">The option's value; <see langword="null"/> means the option is off.</param>
    /// <param name="owner">The options class, for the message.</param>
    /// <param name="option">The option's name.</param>
    public static void ThrowIfNotPositiveDelay(TimeSpan? value, string owner, string option)
    {
        if (value is { } span && !IsPositiveDelay(span))
        {
            throw new ArgumentOutOfRangeException(option, span, $"{owner}.{option} must be positive and at most {PrioritySchedulerOptions.MaxTimerDelay} (the longest .NET timer), or null to disable it.");
        }
    }

    /// <summary>Throws unless <paramref name="value"/> is a positive delay a .NET timer accepts.</summary>
    /// <param name="value">The option's value.</param>
    /// <param name="owner">The options class, for the message.</param>
    /// <param name="option">The option's name.</param>
    public static void ThrowIfNotPositiveDelay(TimeSpan value, string owner, string option)
    {
        if (!IsPositiveDelay(value))
        {
            throw new ArgumentOutOfRangeException(option, value, $"{owner}.{option} must be positive and at most {PrioritySchedulerOptions.MaxTimerDelay} (the longest .NET timer).");
        }
    }

    /// <summary>Throws unless <paramref name="value"/> is zero, a positive delay a .NET timer accepts, or infinite.</summary>
    /// <param name="value">The option's value.</param>
    /// <param name="owner">The options class, for the message.</param>
    /// <param name="option">The option's name.</param>
    public static void ThrowIfNotTimeout(TimeSpan value, string owner, string option)
    {
        if (value != Timeout.InfiniteTimeSpan && (value < TimeSpan.Zero || value > PrioritySchedulerOptions.MaxTimerDelay))
        {
            throw new ArgumentOutOfRangeException(option, value, $"{owner}.{option} must be between zero and {PrioritySchedulerOptions.MaxTimerDelay} (the longest .NET timer), or Timeout.InfiniteTimeSpan.");
        }
    }

    /// <summary>Throws unless <paramref name="value"/> lies between <paramref name="minimum"/> and <paramref name="maximum"/>, both included.</summary>
    /// <param name="value">The option's value.</param>
    /// <param name="minimum">The smallest value allowed.</param>
    /// <param name="maximum">The largest value allowed.</param>
    /// <param name="owner">The options class, for the message.</param>
    /// <param name="option">The option's name.</param>
    public static void ThrowIfOutOfRange(int value, int minimum, int maximum, string owner, string option)
    {
        if (value < minimum || value > maximum)
        {
            throw new ArgumentOutOfRangeException(option, value, $"{owner}.{option} must be between {minimum} and {maximum}.");
        }
    }

    private static bool IsPositiveDelay(TimeSpan value) => value > TimeSpan.Zero && value <= PrioritySchedulerOptions.MaxTimerDelay;
}
