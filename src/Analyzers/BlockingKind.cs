namespace PriorityAsync.Analyzers;

/// <summary>The PA0002 code fixes, named in the diagnostic's <see cref="LaneRulesAnalyzer.BlockingKindProperty"/>.</summary>
internal static class BlockingKind
{
    /// <summary><c>task.Result</c> or <c>task.Wait()</c> becomes <c>await task</c>.</summary>
    public const string AwaitInstance = "AwaitInstance";

    /// <summary><c>task.GetAwaiter().GetResult()</c> becomes <c>await task</c>.</summary>
    public const string AwaitAwaiterSource = "AwaitAwaiterSource";

    /// <summary><c>Task.WaitAll(tasks)</c> becomes <c>await Task.WhenAll(tasks)</c>.</summary>
    public const string WhenAll = "WhenAll";

    /// <summary><c>Thread.Sleep(time)</c> becomes <c>await Task.Delay(time)</c>.</summary>
    public const string Delay = "Delay";
}
