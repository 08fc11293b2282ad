using System.Runtime.ExceptionServices;

namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>Runs <paramref name="callback"/> in <paramref name="lane"/> and blocks the calling (outside) thread until it has run.</summary>
    internal void SendFromOutside(Lane lane, SendOrPostCallback callback, object? state)
    {
        using var done = new ManualResetEventSlim();
        ExceptionDispatchInfo? failure = null;
        Enqueue(
            lane,
            (SendOrPostCallback)(_ =>
            {
                try
                {
                    callback(state);
                }
                catch (Exception ex)
                {
                    failure = ExceptionDispatchInfo.Capture(ex);
                }
                finally
                {
                    done.Set();
                }
            }),
            null);
        done.Wait();
        failure?.Throw();
    }
}
