namespace PriorityAsync;

public sealed partial class PriorityAsyncContext
{
    /// <summary>Runs <paramref name="entry"/> in the most urgent lane of a new context on the calling thread.</summary>
    /// <param name="entry">The async entry point.</param>
    /// <param name="options">The context's options; <see langword="null"/> for the defaults.</param>
    public static void Run(Func<Task> entry, PrioritySchedulerOptions? options = null)
    {
        using var context = new PriorityAsyncContext(options);
        context.Execute(entry);
    }

    /// <summary>Runs <paramref name="entry"/> in the most urgent lane of a new context on the calling thread.</summary>
    /// <typeparam name="T">The result type.</typeparam>
    /// <param name="entry">The async entry point.</param>
    /// <param name="options">The context's options; <see langword="null"/> for the defaults.</param>
    /// <returns>The entry point's result.</returns>
    public static T Run<T>(Func<Task<T>> entry, PrioritySchedulerOptions? options = null)
    {
        using var context = new PriorityAsyncContext(options);
        return context.Execute(entry);
    }
}
