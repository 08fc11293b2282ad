namespace PriorityAsync.MessagePump;

/// <summary>A lease kept by a <see cref="LeaseKeeper"/> was lost (<see cref="LeaseKeeper.LeaseLost"/>).</summary>
public sealed class LeaseLostEventArgs : EventArgs
{
    internal LeaseLostEventArgs(LeaseHandle handle, Exception? exception)
    {
        Handle = handle;
        Exception = exception;
    }

    /// <summary>Gets the handle of the lost lease; its <see cref="LeaseHandle.LeaseLostToken"/> is canceled.</summary>
    public LeaseHandle Handle { get; }

    /// <summary>Gets the renewal's failure, or <see langword="null"/> when the lock ran out without one.</summary>
    public Exception? Exception { get; }
}
