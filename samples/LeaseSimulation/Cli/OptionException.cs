namespace LeaseSimulation.Cli;

/// <summary>A bad command line: names the option and says what is wrong. Exit code 2.</summary>
public sealed class OptionException : Exception
{
    /// <summary>Creates the exception.</summary>
    /// <param name="option">The option, e.g. <c>--messages</c>.</param>
    /// <param name="message">What is wrong, as a full sentence that names the option.</param>
    public OptionException(string option, string message)
        : base(message)
    {
        Option = option;
    }

    /// <summary>Gets the option at fault.</summary>
    public string Option { get; }
}
