using System.Windows.Forms;

namespace WinFormsSingleThread;

/// <summary>Starts the WinForms window (Windows only).</summary>
internal static class WindowsEntry
{
    public static int Run(SampleOptions options)
    {
        Application.EnableVisualStyles();
        Application.SetCompatibleTextRenderingDefault(false);
        Application.Run(new LeaseForm(options));
        return 0;
    }
}
