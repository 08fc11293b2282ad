using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace LeaseSimulation.Arguments;

/// <summary>
/// The command-line options both samples share (same names, descriptions and value syntax), and the value parsers
/// behind every option: a bad value is a one-line error that names the option.
/// </summary>
public static class ScenarioOptions
{
    /// <summary>The value syntax of <c>--clock</c>.</summary>
    public const string ClockValues = "virtual|real";

    /// <summary>Creates <c>--strategy</c>: a strategy name of <see cref="StrategyCatalog"/>, lower-cased.</summary>
    /// <param name="acceptsAll">Whether <c>all</c> is accepted too (and returned as <c>all</c>).</param>
    /// <param name="withServiceBus">
    /// Whether the strategies that run only on Service Bus (the SDK's processor) are accepted too; a program that has no
    /// <c>--broker servicebus</c> leaves them out.
    /// </param>
    /// <returns>The option.</returns>
    public static Option<string> Strategy(bool acceptsAll, bool withServiceBus = false)
    {
        var names = StrategyCatalog.All
            .Where(s => withServiceBus || s.Supports(BrokerKind.Memory))
            .Select(s => s.Name)
            .Concat(acceptsAll ? ["all"] : [])
            .ToArray();
        var list = string.Join('|', names);
        var option = new Option<string>("--strategy")
        {
            // A list too long for the help's first column goes into the description.
            Description = list.Length > 40 ? $"The consumer strategy: {string.Join(", ", names[..^1])} or {names[^1]}." : "The consumer strategy.",
            HelpName = list.Length > 40 ? "NAME" : list,
        };
        option.CustomParser = result =>
        {
            if (Value(result) is not { } value)
            {
                return default;
            }

            var name = names.FirstOrDefault(n => string.Equals(n, value, StringComparison.OrdinalIgnoreCase));
            if (name is null)
            {
                result.AddError($"Option {option.Name} has the value '{value}'; expected {string.Join(", ", names[..^1])} or {names[^1]}.");
            }

            return name;
        };
        return Once(option);
    }

    /// <summary>Creates <c>--cpu-ms</c>: the CPU operation, in ms of scenario time.</summary>
    /// <returns>The option.</returns>
    public static Option<int> CpuMs() =>
        WholeNumber("--cpu-ms", 0, "The CPU operation, in ms of scenario time.");

    /// <summary>Creates <c>--messages</c>: the messages in the queue.</summary>
    /// <returns>The option.</returns>
    public static Option<int> Messages() =>
        WholeNumber("--messages", 1, "The messages in the queue.");

    /// <summary>Creates <c>--loops</c>: the CPU+IO iterations per message.</summary>
    /// <returns>The option.</returns>
    public static Option<int> Loops() =>
        WholeNumber("--loops", 1, "The CPU+IO iterations per message.");

    /// <summary>Creates <c>--clock</c>: virtual time or the real (scaled) clock.</summary>
    /// <returns>The option.</returns>
    public static Option<ClockKind> Clock() =>
        Choice<ClockKind>("--clock", ClockValues, "Virtual time (instant, deterministic) or the real clock scaled by --time-scale.");

    /// <summary>Creates <c>--time-scale</c>: the real-clock scale, greater than 0 and at most 1000.</summary>
    /// <returns>The option.</returns>
    public static Option<double> TimeScale()
    {
        var option = new Option<double>("--time-scale")
        {
            Description = "The real-clock scale: 0.01 turns 1000 ms into 10 ms.",
            HelpName = "F",
        };
        option.CustomParser = result =>
        {
            if (Value(result) is not { } value)
            {
                return default;
            }

            if (double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out var scale) && scale > 0 && scale <= 1000)
            {
                return scale;
            }

            result.AddError($"Option {option.Name} has the value '{value}'; expected a number greater than 0 and at most 1000.");
            return default;
        };
        return Once(option);
    }

    /// <summary>Creates an option with a whole-number value of at least <paramref name="minimum"/>.</summary>
    /// <param name="name">The option, e.g. <c>--loops</c>.</param>
    /// <param name="minimum">The smallest value accepted.</param>
    /// <param name="description">The help text.</param>
    /// <returns>The option.</returns>
    public static Option<int> WholeNumber(string name, int minimum, string description)
    {
        var option = new Option<int>(name) { Description = description, HelpName = "N" };
        option.CustomParser = result =>
        {
            if (Value(result) is not { } value)
            {
                return default;
            }

            if (int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out var number) && number >= minimum)
            {
                return number;
            }

            result.AddError($"Option {name} has the value '{value}'; expected a whole number of at least {minimum}.");
            return default;
        };
        return Once(option);
    }

    /// <summary>Creates an option whose value is whole milliseconds, written <c>20ms</c> or <c>20</c>.</summary>
    /// <param name="name">The option, e.g. <c>--broker-latency</c>.</param>
    /// <param name="description">The help text.</param>
    /// <returns>The option.</returns>
    public static Option<int> Milliseconds(string name, string description)
    {
        var option = new Option<int>(name) { Description = description, HelpName = "D" };
        option.CustomParser = result =>
        {
            if (Value(result) is not { } value)
            {
                return default;
            }

            var number = value.EndsWith("ms", StringComparison.OrdinalIgnoreCase) ? value[..^2] : value;
            if (int.TryParse(number, NumberStyles.None, CultureInfo.InvariantCulture, out var milliseconds))
            {
                return milliseconds;
            }

            result.AddError($"Option {name} has the value '{value}'; expected a whole number of milliseconds from 0 to {int.MaxValue}, e.g. 20ms.");
            return default;
        };
        return Once(option);
    }

    /// <summary>Creates an option whose value is one of an enum's members, by name (case-insensitive, not by number).</summary>
    /// <typeparam name="T">The enum.</typeparam>
    /// <param name="name">The option, e.g. <c>--cpu-mode</c>.</param>
    /// <param name="values">The value syntax, e.g. <c>work|sleep|spin</c>.</param>
    /// <param name="description">The help text.</param>
    /// <returns>The option.</returns>
    public static Option<T> Choice<T>(string name, string values, string description)
        where T : struct, Enum
    {
        var option = new Option<T>(name) { Description = description, HelpName = values };
        option.CustomParser = result =>
        {
            if (Value(result) is not { } value)
            {
                return default;
            }

            if (Enum.TryParse<T>(value, ignoreCase: true, out var parsed) && Enum.IsDefined(parsed) && !int.TryParse(value, out _))
            {
                return parsed;
            }

            result.AddError($"Option {name} has the value '{value}'; expected {values}.");
            return default;
        };
        return Once(option);
    }

    /// <summary>Creates an option whose value is a non-blank string (a path, a connection string).</summary>
    /// <param name="name">The option, e.g. <c>--json</c>.</param>
    /// <param name="helpName">The value's name in the help, e.g. <c>PATH</c>.</param>
    /// <param name="description">The help text.</param>
    /// <returns>The option.</returns>
    public static Option<string> Text(string name, string helpName, string description)
    {
        var option = new Option<string>(name) { Description = description, HelpName = helpName };
        option.CustomParser = result =>
        {
            if (Value(result) is not { } value)
            {
                return default;
            }

            if (string.IsNullOrWhiteSpace(value))
            {
                result.AddError($"Option {name} needs a value.");
            }

            return value;
        };
        return Once(option);
    }

    /// <summary>Creates a flag: present or not, with no value (<c>--flag=yes</c> is an error naming it).</summary>
    /// <param name="name">The option, e.g. <c>--monitor</c>.</param>
    /// <param name="description">The help text.</param>
    /// <returns>The option.</returns>
    public static Option<bool> Flag(string name, string description)
    {
        var option = new Option<bool>(name) { Description = description, Arity = ArgumentArity.ZeroOrOne };
        option.CustomParser = result =>
        {
            if (result.Tokens.Count > 0)
            {
                result.AddError($"Option {name} takes no value.");
            }

            return true;
        };
        return Once(option);
    }

    /// <summary>Gets whether <paramref name="option"/> was given on the command line.</summary>
    /// <param name="parseResult">The parse result.</param>
    /// <param name="option">The option.</param>
    /// <returns>Whether it was given.</returns>
    public static bool IsGiven(ParseResult parseResult, Option option)
    {
        ArgumentNullException.ThrowIfNull(parseResult);
        return parseResult.GetResult(option) is { Implicit: false };
    }

    /// <summary>Gets the value of <paramref name="option"/> if it was given, otherwise <see langword="null"/>.</summary>
    /// <typeparam name="T">The value type.</typeparam>
    /// <param name="parseResult">The parse result.</param>
    /// <param name="option">The option.</param>
    /// <returns>The value, or <see langword="null"/>.</returns>
    public static T? ValueIfGiven<T>(ParseResult parseResult, Option<T> option)
        where T : struct =>
        IsGiven(parseResult, option) ? parseResult.GetValue(option) : null;

    /// <summary>Gets the value of <paramref name="option"/> if it was given, otherwise <see langword="null"/>.</summary>
    /// <param name="parseResult">The parse result.</param>
    /// <param name="option">The option.</param>
    /// <returns>The value, or <see langword="null"/>.</returns>
    public static string? TextIfGiven(ParseResult parseResult, Option<string> option) =>
        IsGiven(parseResult, option) ? parseResult.GetValue(option) : null;

    /// <summary>
    /// Gets the value of an option for a custom parser, or <see langword="null"/> (and an error naming the option)
    /// when the option has no value and the next option was taken for it.
    /// </summary>
    /// <param name="result">The option's argument result.</param>
    /// <returns>The value, or <see langword="null"/>.</returns>
    public static string? Value(ArgumentResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var value = result.Tokens.Count > 0 ? result.Tokens[^1].Value : string.Empty;
        if (value.StartsWith("--", StringComparison.Ordinal) && result.Parent is OptionResult option)
        {
            result.AddError($"Option {option.Option.Name} needs a value.");
            return null;
        }

        return value;
    }

    private static Option<T> Once<T>(Option<T> option)
    {
        option.Validators.Add(result =>
        {
            if (result.IdentifierTokenCount > 1)
            {
                result.AddError($"Option {option.Name} is given twice.");
            }
        });
        return option;
    }
}
