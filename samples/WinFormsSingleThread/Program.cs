namespace WinFormsSingleThread;

/// <summary>Entry point: a WinForms window on Windows, the headless run everywhere else (or with --headless).</summary>
internal static class Program
{
    [STAThread]
    private static int Main(string[] args)
    {
        SampleOptions options;
        try
        {
            options = SampleOptions.Parse(args);
        }
        catch (ArgumentException ex)
        {
            Console.Error.WriteLine($"error: {ex.Message.Replace($" (Parameter '{ex.ParamName}')", string.Empty, StringComparison.Ordinal)}");
            return 2;
        }

        if (options.Help)
        {
            Console.WriteLine(SampleOptions.Usage);
            return 0;
        }

#if WINDOWS_FORMS
        if (!options.Headless)
        {
            return WindowsEntry.Run(options);
        }
#endif
        return HeadlessRun.Run(options, Console.Out);
    }
}
