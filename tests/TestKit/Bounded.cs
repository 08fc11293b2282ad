using System.Globalization;
using System.Runtime.ExceptionServices;

namespace PriorityAsync.TestKit;

/// <summary>
/// The bounded waits of every test project: generous (a noisy shared machine never reaches them), and failing with a
/// message that names what did not happen, so a broken scheduler, pump or server fails a test instead of hanging the run.
/// </summary>
public static class Bounded
{
    /// <summary>The environment variable that overrides <see cref="Generous"/>, in whole seconds.</summary>
    public const string BoundVariable = "PRIORITYASYNC_TEST_BOUND_SECONDS";

    /// <summary>
    /// Gets the bound of a wait for in-process work: 30 s, far beyond anything a working scheduler needs, unless
    /// <see cref="BoundVariable"/> says otherwise. Mutation runs set it below Stryker's own limit, so that a mutant that
    /// hangs a scheduler fails the test that waits for it, with its message, instead of timing out
    /// (docs/reliability.md, "Mutation testing").
    /// </summary>
    public static readonly TimeSpan Generous = BoundFromEnvironment(Environment.GetEnvironmentVariable(BoundVariable));

    /// <summary>
    /// Gets the bound of a wait that crosses a process, a socket or a server (PostgreSQL, the Service Bus test broker) or
    /// a stress run: twice <see cref="Generous"/>, and never below 60 s, so that a mutation run's short
    /// <see cref="BoundVariable"/> shortens only the waits for in-process work.
    /// </summary>
    public static readonly TimeSpan Patient = TimeSpan.FromTicks(Math.Max(TimeSpan.FromSeconds(60).Ticks, (Generous * 2).Ticks));

    /// <summary>Reads the bound: 30 s when <paramref name="seconds"/> is not set, otherwise a whole number of seconds from 1 to 600.</summary>
    /// <param name="seconds">The value of <see cref="BoundVariable"/>, or <see langword="null"/> when it is not set.</param>
    /// <returns>The bound.</returns>
    public static TimeSpan BoundFromEnvironment(string? seconds)
    {
        if (string.IsNullOrEmpty(seconds))
        {
            return TimeSpan.FromSeconds(30);
        }

        if (!int.TryParse(seconds, NumberStyles.None, CultureInfo.InvariantCulture, out var value) || value is < 1 or > 600)
        {
            throw new InvalidOperationException($"{BoundVariable} is '{seconds}'; it must be a whole number of seconds from 1 to 600.");
        }

        return TimeSpan.FromSeconds(value);
    }

    /// <summary>Waits for <paramref name="task"/> and rethrows its failure; throws naming <paramref name="what"/> when it does not finish in time.</summary>
    /// <param name="task">The task to wait for.</param>
    /// <param name="what">What the task is, for the message.</param>
    /// <returns>A task that ends with <paramref name="task"/>.</returns>
    public static async Task Within(Task task, string what)
    {
        await Ended(task, what, Generous).ConfigureAwait(false);
        await task.ConfigureAwait(false);
    }

    /// <summary>Waits for <paramref name="task"/> and returns its result; throws naming <paramref name="what"/> when it does not finish in time.</summary>
    /// <typeparam name="T">The task's result type.</typeparam>
    /// <param name="task">The task to wait for.</param>
    /// <param name="what">What the task is, for the message.</param>
    /// <returns>The task's result.</returns>
    public static async Task<T> Within<T>(Task<T> task, string what)
    {
        await Within((Task)task, what).ConfigureAwait(false);
        return await task.ConfigureAwait(false);
    }

    /// <summary>
    /// Waits until <paramref name="task"/> has ended, in any state (its failure is not rethrown); throws naming
    /// <paramref name="what"/> when it does not end within <paramref name="bound"/> (<see cref="Generous"/> when none is given).
    /// </summary>
    /// <param name="task">The task to wait for.</param>
    /// <param name="what">What the task is, for the message.</param>
    /// <param name="bound">The bound, or <see langword="null"/> for <see cref="Generous"/>.</param>
    /// <returns>A task that ends when <paramref name="task"/> has.</returns>
    public static async Task Ended(Task task, string what, TimeSpan? bound = null)
    {
        var limit = bound ?? Generous;
        if (await Task.WhenAny(task, Task.Delay(limit)).ConfigureAwait(false) != task)
        {
            throw new TimeoutException($"{what} did not finish within {limit.TotalSeconds:0} s");
        }
    }

    /// <summary>Blocks until <paramref name="task"/> has ended, in any state; throws naming <paramref name="what"/> when it does not end in time.</summary>
    /// <param name="task">The task to wait for.</param>
    /// <param name="what">What the task is, for the message.</param>
    /// <param name="bound">The bound, or <see langword="null"/> for <see cref="Generous"/>.</param>
    public static void Wait(Task task, string what, TimeSpan? bound = null)
    {
        ArgumentNullException.ThrowIfNull(task);
        var limit = bound ?? Generous;
        if (!((IAsyncResult)task).AsyncWaitHandle.WaitOne(limit))
        {
            throw new TimeoutException($"{what} did not finish within {limit.TotalSeconds:0} s");
        }
    }

    /// <summary>Waits for <paramref name="signal"/>; throws naming <paramref name="what"/> when it is not set in time.</summary>
    /// <param name="signal">The signal to wait for.</param>
    /// <param name="what">What the signal means, for the message.</param>
    /// <param name="bound">The bound, or <see langword="null"/> for <see cref="Generous"/>.</param>
    public static void Wait(ManualResetEventSlim signal, string what, TimeSpan? bound = null)
    {
        ArgumentNullException.ThrowIfNull(signal);
        Wait(signal.WaitHandle, what, bound);
    }

    /// <summary>Waits for <paramref name="handle"/>; throws naming <paramref name="what"/> when it is not set in time.</summary>
    /// <param name="handle">The handle to wait for.</param>
    /// <param name="what">What the handle means, for the message.</param>
    /// <param name="bound">The bound, or <see langword="null"/> for <see cref="Generous"/>.</param>
    public static void Wait(WaitHandle handle, string what, TimeSpan? bound = null)
    {
        ArgumentNullException.ThrowIfNull(handle);
        var limit = bound ?? Generous;
        if (!handle.WaitOne(limit))
        {
            throw new TimeoutException($"{what} did not happen within {limit.TotalSeconds:0} s");
        }
    }

    /// <summary>Joins a thread the test started, or fails naming it.</summary>
    /// <param name="thread">The thread.</param>
    /// <param name="bound">The bound, or <see langword="null"/> for <see cref="Generous"/>.</param>
    public static void Join(Thread thread, TimeSpan? bound = null)
    {
        ArgumentNullException.ThrowIfNull(thread);
        var limit = bound ?? Generous;
        if (!thread.Join(limit))
        {
            throw new TimeoutException($"thread '{thread.Name}' did not end within {limit.TotalSeconds:0} s");
        }
    }

    /// <summary>
    /// Polls <paramref name="condition"/> every <paramref name="step"/> (100 ms when none is given) until it holds; throws
    /// naming <paramref name="what"/> when it still does not hold after <paramref name="limit"/> of wall-clock time.
    /// </summary>
    /// <param name="condition">The condition.</param>
    /// <param name="limit">How long it may take.</param>
    /// <param name="what">What the condition means, for the message.</param>
    /// <param name="step">The time between two checks.</param>
    /// <returns>A task that ends when the condition holds.</returns>
    public static async Task UntilAsync(Func<Task<bool>> condition, TimeSpan limit, string what, TimeSpan? step = null)
    {
        ArgumentNullException.ThrowIfNull(condition);
        var deadline = DateTime.UtcNow + limit;
        while (!await condition().ConfigureAwait(false))
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Timed out after {limit.TotalSeconds:0.#} s waiting for {what}.");
            }

            await Task.Delay(step ?? TimeSpan.FromMilliseconds(100)).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// <see cref="PriorityAsyncContext.Run(Func{Task}, PrioritySchedulerOptions?)"/> on a thread of its own
    /// (<see cref="OnOwnThread"/>): a context that never returns fails the test instead of hanging it. For tests that
    /// do not compare the run's thread with the test's own.
    /// </summary>
    /// <param name="entry">The context's entry point.</param>
    /// <param name="options">The scheduler's options.</param>
    public static void Run(Func<Task> entry, PrioritySchedulerOptions? options = null) =>
        OnOwnThread(() => PriorityAsyncContext.Run(entry, options), "the context's run");

    /// <summary>As <see cref="Run(Func{Task}, PrioritySchedulerOptions?)"/>, returning the entry point's result.</summary>
    /// <typeparam name="T">The entry point's result type.</typeparam>
    /// <param name="entry">The context's entry point.</param>
    /// <param name="options">The scheduler's options.</param>
    /// <returns>The entry point's result.</returns>
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
    /// <param name="body">What to run.</param>
    /// <param name="what">What it is, for the message and the thread's name.</param>
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
            ExceptionDispatchInfo.Throw(failure);
        }
    }
}
