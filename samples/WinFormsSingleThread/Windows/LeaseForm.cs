using System.Drawing;
using System.Windows.Forms;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;

namespace WinFormsSingleThread;

/// <summary>The window: strategy and CPU choice, a start button and live counters.</summary>
internal sealed class LeaseForm : Form
{
    private readonly SampleOptions _options;
    private readonly ComboBox _strategy = new() { DropDownStyle = ComboBoxStyle.DropDownList, Width = 160 };
    private readonly NumericUpDown _cpuMs = new() { Minimum = 0, Maximum = 5000, Increment = 100, Width = 80 };
    private readonly Button _start = new() { Text = "Start", AutoSize = true };
    private readonly Label _counters = new() { AutoSize = true, Font = new Font(FontFamily.GenericMonospace, 11) };
    private readonly System.Windows.Forms.Timer _refresh = new() { Interval = 250 };
    private ScenarioRun? _run;

    public LeaseForm(SampleOptions options)
    {
        _options = options;
        Text = "Lost leases on one UI thread (seed 001)";
        ClientSize = new Size(640, 200);
        _strategy.Items.AddRange(UiThreadConsumers.Names);
        _strategy.SelectedItem = UiThreadConsumers.Names.Contains(options.Strategy) ? options.Strategy : "priority";
        _cpuMs.Value = options.CpuMs;
        _counters.Text = "Press Start. fifo and seed-yield block this window during CPU operations, as in the seed.";
        var controls = new FlowLayoutPanel { Dock = DockStyle.Top, AutoSize = true, Padding = new Padding(8) };
        controls.Controls.AddRange([new Label { Text = "strategy", AutoSize = true }, _strategy, new Label { Text = "CPU ms", AutoSize = true }, _cpuMs, _start]);
        _counters.Location = new Point(12, 60);
        Controls.Add(_counters);
        Controls.Add(controls);
        _start.Click += async (_, _) => await StartAsync();
        _refresh.Tick += (_, _) => ShowCounters();
    }

    private async Task StartAsync()
    {
        _start.Enabled = false;
        var settings = new SimulationSettings
        {
            Context = ContextKind.Hosted,
            Clock = ClockKind.Real,
            TimeScale = _options.TimeScale,
            CpuTime = TimeSpan.FromMilliseconds((double)_cpuMs.Value),
            Messages = _options.Messages,
            Loops = _options.Loops,
        };
        _run = new ScenarioRun(settings);
        using var monitor = _run.Clock.StartMonitor(SimulationRunner.MonitorInterval, _run.Tracker.Sample);
        _refresh.Start();
        try
        {
            await UiThreadConsumers.RunAsync((string)_strategy.SelectedItem!, _run, this);
        }
        finally
        {
            _refresh.Stop();
            ShowCounters();
            _start.Enabled = true;
        }
    }

    private void ShowCounters()
    {
        if (_run is { } run)
        {
            var now = run.Tracker.Snapshot();
            _counters.Text = $"in flight {now.InFlight}   done {now.Done}   lost {now.Lost}\nelapsed {now.Seconds:0} s of scenario time (×{_options.TimeScale} real)";
        }
    }
}
