namespace PriorityAsync.Tests.Support;

/// <summary>
/// The bounded waits of the tests: generous (a noisy shared machine never reaches them), and failing with a message
/// that names what did not happen, so a broken scheduler fails a test instead of hanging the run.
/// </summary>
internal static class Bounded
{
    /// <summary>The environment variable that overrides <see cref="Generous"/>, in whole seconds.</summary>
    public const string BoundVariable = "PRIORITYASYNC_TEST_BOUND_SECONDS";

    /// <summary>
    /// The bound of every wait: 30 s, far beyond anything a working scheduler needs, unless <see cref="BoundVariable"/>
    /// says otherwise. Mutation runs set it below Stryker's own limit, so that a mutant that hangs a scheduler fails
    /// the test that waits for it, with its message, instead of timing out (docs/reliability.md, "Mutation testing").
    /// </summary>
    public static readonly TimeSpan Generous = BoundFromEnvironment(Environment.GetEnvironmentVariable(BoundVariable));

    /// <summary>Reads the bound: 30 s when <paramref name="seconds"/> is not set, otherwise a whole number of seconds from 1 to 600.</summary>
    internal static TimeSpan BoundFromEnvironment(string? seconds)
    {
        if (string.IsNullOrEmpty(seconds))
        {
            return TimeSpan.FromSeconds(30);
        }

        if (!int.TryParse(seconds, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var value) || value is < 1 or > 600)
        {
            throw new InvalidOperationException($"{BoundVariable} is '{seconds}'; it must be a whole number of seconds from 1 to 600.");
        }

        return TimeSpan.FromSeconds(value);
    }

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
    /// <see cref="PriorityAsyncContext.Run(Func{Task}, PrioritySchedulerOptions?)"/> on a thread of its own
    /// (<see cref="OnOwnThread"/>): a context that never returns fails the test instead of hanging it. For tests that
    /// do not compare the run's thread with the test's own.
    /// </summary>
    public static void Run(Func<Task> entry, PrioritySchedulerOptions? options = null) =>
        OnOwnThread(() => PriorityAsyncContext.Run(entry, options), "the context's run");

    /// <summary>As <see cref="Run(Func{Task}, PrioritySchedulerOptions?)"/>, returning the entry point's result.</summary>
    public static T Run<T>(Func<Task<T>> entry, PrioritySchedulerOptions? options = null)
    {
        T result = default!;
        OnOwnThread(() => result = PriorityAsyncContext.Run(entry, options), "the context's run");
        return result;
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
