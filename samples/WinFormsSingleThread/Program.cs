using LeaseSimulation.Arguments;

namespace WinFormsSingleThread;

/// <summary>Entry point: a WinForms window on Windows, the headless run everywhere else (or with --headless).</summary>
internal static class Program
{
    [STAThread]
    private static int Main(string[] args) =>
        CommandLineRunner.Run(SampleOptions.CreateCommand(Run), args, Console.Out, Console.Error);

    private static int Run(SampleOptions options)
    {
#if WINDOWS_FORMS
        if (!options.Headless)
        {
            return WindowsEntry.Run(options);
        }
#endif
        return HeadlessRun.Run(options, Console.Out);
    }
}
