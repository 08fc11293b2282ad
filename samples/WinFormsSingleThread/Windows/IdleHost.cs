using System.Collections.Concurrent;
using System.Windows.Forms;

namespace WinFormsSingleThread;

/// <summary>
/// The UI thread as the host of a <c>HostedPriorityScheduler</c>, running what is posted to it from
/// <see cref="Application.Idle"/>: one thread, FIFO, and the message loop handles input, paint and timers before each
/// callback.
/// </summary>
/// <remarks>
/// <c>WindowsFormsSynchronizationContext</c> itself is the right thread but not a host that lets the window breathe:
/// its posts are <c>BeginInvoke</c>s, and one pass of the message loop runs every marshaled callback queued, including
/// those queued while it runs, so the scheduler's next dispatch (posted at the end of a slice) runs in the same pass;
/// and posted messages come before input in Win32's queue order. Under Wine the window stopped repainting for the whole
/// run. Here a post only queues the callback and wakes the loop with an empty <c>BeginInvoke</c>; the callbacks queued
/// so far run when the loop next goes idle, after the input, paint and timer messages waiting.
/// </remarks>
internal sealed class IdleHost : SynchronizationContext, IDisposable
{
    private readonly ConcurrentQueue<(SendOrPostCallback Callback, object? State)> _queue = new();
    private readonly Control _window;

    /// <summary>Creates the host on the calling thread, the UI thread of <paramref name="window"/>.</summary>
    /// <param name="window">A control of the UI thread, with its handle created; used to wake the loop.</param>
    public IdleHost(Control window)
    {
        ArgumentNullException.ThrowIfNull(window);
        if (!window.IsHandleCreated || window.InvokeRequired)
        {
            throw new ArgumentException("Create the host on the window's UI thread, once the window is shown.", nameof(window));
        }

        _window = window;
        Application.Idle += OnIdle;
    }

    /// <inheritdoc />
    public override void Post(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        _queue.Enqueue((d, state));
        Wake();
    }

    /// <inheritdoc />
    public override void Send(SendOrPostCallback d, object? state) =>
        throw new NotSupportedException("IdleHost runs callbacks when the message loop is idle; use Post.");

    /// <inheritdoc />
    public override SynchronizationContext CreateCopy() => this;

    /// <summary>Stops running callbacks (after the scheduler hosted here has stopped).</summary>
    public void Dispose() => Application.Idle -= OnIdle;

    private void Wake()
    {
        if (!_window.IsDisposed)
        {
            _window.BeginInvoke(static () => { });
        }
    }

    // The callbacks queued before this idle pass; one posted meanwhile waits for the next, after the messages waiting.
    private void OnIdle(object? sender, EventArgs e)
    {
        for (var count = _queue.Count; count > 0 && _queue.TryDequeue(out var item); count--)
        {
            item.Callback(item.State);
        }

        if (!_queue.IsEmpty)
        {
            Wake();
        }
    }
}
