using System.CommandLine;
using System.CommandLine.Help;
using System.CommandLine.Parsing;

namespace LeaseSimulation.Arguments;

/// <summary>
/// Parses and runs a sample's <see cref="RootCommand"/> the way both samples behave: <c>--help</c> prints the help and
/// exits 0; a bad command line prints one line naming the option to the error writer (not the whole help) and exits
/// <see cref="UsageError"/>; otherwise the command's action runs.
/// </summary>
public static class CommandLineRunner
{
    /// <summary>The exit code of a bad command line.</summary>
    public const int UsageError = 2;

    /// <summary>The width the help is wrapped at.</summary>
    public const int HelpWidth = 120;

    /// <summary>
    /// Parses <paramref name="args"/> (response files off: an argument starting with @ is a value; help wrapped at
    /// <see cref="HelpWidth"/>).
    /// </summary>
    /// <param name="command">The command.</param>
    /// <param name="args">The command-line arguments.</param>
    /// <returns>The parse result.</returns>
    public static ParseResult Parse(RootCommand command, IReadOnlyList<string> args)
    {
        ArgumentNullException.ThrowIfNull(command);
        ArgumentNullException.ThrowIfNull(args);
        foreach (var help in command.Options.OfType<HelpOption>())
        {
            // The same wrapping on a terminal, in a pipe and in a test.
            help.Action = new HelpAction { MaxWidth = HelpWidth };
        }

        return command.Parse(args, new ParserConfiguration { ResponseFileTokenReplacer = null });
    }

    /// <summary>Gets the first error of a parse result, as the option at fault and a one-line message naming it.</summary>
    /// <param name="parseResult">The parse result.</param>
    /// <returns>The option and message, or <see langword="null"/> when the command line parsed.</returns>
    public static (string Option, string Message)? FirstError(ParseResult parseResult)
    {
        ArgumentNullException.ThrowIfNull(parseResult);

        // An option's own error first (a value that is missing or bad), then a token nothing took.
        if (parseResult.Errors.FirstOrDefault(e => e.SymbolResult is OptionResult) is { SymbolResult: OptionResult result } error)
        {
            var option = result.Option.Name;
            var message = result switch
            {
                { IdentifierTokenCount: > 1 } => $"Option {option} is given twice.",
                { Tokens.Count: 0 } when result.Option.Arity.MinimumNumberOfValues > 0 => $"Option {option} needs a value.",
                _ => error.Message,
            };
            return (option, OneLine(message));
        }

        if (parseResult.UnmatchedTokens.Count > 0)
        {
            var token = parseResult.UnmatchedTokens[0];
            if (token.StartsWith('-'))
            {
                return (token, $"Unknown option {token}; see --help.");
            }

            // A value after a flag (--monitor=yes, --monitor yes): the flag takes none, so the value is left over.
            var index = parseResult.Tokens.ToList().FindIndex(t => t.Value == token && t.Type == TokenType.Argument);
            if (index > 0 && parseResult.Tokens[index - 1] is { Type: TokenType.Option } flag)
            {
                return (flag.Value, $"Option {flag.Value} takes no value.");
            }

            return (token, $"Unexpected argument '{token}'; see --help.");
        }

        return parseResult.Errors.Count == 0 ? null : (string.Empty, OneLine(parseResult.Errors[0].Message));
    }

    /// <summary>Parses and runs <paramref name="command"/>.</summary>
    /// <param name="command">The command, with its action set.</param>
    /// <param name="args">The command-line arguments.</param>
    /// <param name="output">Where the help and the action's output go.</param>
    /// <param name="error">Where the error line goes.</param>
    /// <returns>0 after <c>--help</c>, <see cref="UsageError"/> on a bad command line, otherwise the action's exit code.</returns>
    public static int Run(RootCommand command, IReadOnlyList<string> args, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        var parseResult = Parse(command, args);
        if (parseResult.Action is not HelpAction && FirstError(parseResult) is { } bad)
        {
            error.WriteLine($"error: {bad.Message}");
            return UsageError;
        }

        return parseResult.Invoke(new InvocationConfiguration { Output = output, Error = error, EnableDefaultExceptionHandler = false });
    }

    private static string OneLine(string message) =>
        string.Join(' ', message.Split(['\r', '\n', '\t'], StringSplitOptions.RemoveEmptyEntries));
}
