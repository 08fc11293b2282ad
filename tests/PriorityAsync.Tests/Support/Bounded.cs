namespace PriorityAsync.Tests.Support;

/// <summary>
/// The bounded waits of the tests: generous (a noisy shared machine never reaches them), and failing with a message
/// that names what did not happen, so a broken scheduler fails a test instead of hanging the run.
/// </summary>
internal static class Bounded
{
    /// <summary>The bound of every wait: far beyond anything a working scheduler needs.</summary>
    public static readonly TimeSpan Generous = TimeSpan.FromSeconds(30);

    /// <summary>Waits for <paramref name="task"/>; throws naming <paramref name="what"/> when it does not finish in time.</summary>
    public static async Task Within(Task task, string what)
    {
        if (await Task.WhenAny(task, Task.Delay(Generous)).ConfigureAwait(false) != task)
        {
            throw new TimeoutException($"{what} did not finish within {Generous.TotalSeconds:0} s");
        }

        await task.ConfigureAwait(false);
    }

    /// <summary>Waits for <paramref name="task"/> and returns its result; throws naming <paramref name="what"/> when it does not finish in time.</summary>
    public static async Task<T> Within<T>(Task<T> task, string what)
    {
        await Within((Task)task, what).ConfigureAwait(false);
        return await task.ConfigureAwait(false);
    }

    /// <summary>Waits for <paramref name="signal"/>; throws naming <paramref name="what"/> when it is not set in time.</summary>
    public static void Wait(ManualResetEventSlim signal, string what)
    {
        if (!signal.Wait(Generous))
        {
            throw new TimeoutException($"{what} did not happen within {Generous.TotalSeconds:0} s");
        }
    }

    /// <summary>
    /// Runs <paramref name="body"/> (typically a whole <see cref="PriorityAsyncContext"/> run, which blocks its thread) on
    /// a thread of its own and waits for it; throws naming <paramref name="what"/> when it does not return in time.
    /// Exceptions of the body are rethrown as they are.
    /// </summary>
    public static void OnOwnThread(Action body, string what)
    {
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                body();
            }
            catch (Exception ex)
            {
                failure = ex;
            }
        })
        {
            IsBackground = true,
            Name = what,
        };
        thread.Start();
        if (!thread.Join(Generous))
        {
            throw new TimeoutException($"{what} did not return within {Generous.TotalSeconds:0} s");
        }

        if (failure is not null)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
        }
    }
}
