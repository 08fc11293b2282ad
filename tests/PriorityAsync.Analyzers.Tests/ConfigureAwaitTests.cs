namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0003: ConfigureAwait(false) in lane code.</summary>
public sealed class ConfigureAwaitTests
{
    [Fact]
    public Task ConfigureAwait_false_is_reported_in_lane_code_only() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task InLane(Task task, Task<int> value, ValueTask valueTask, IAsyncDisposable resource)
            {
                await {|PA0003:task.ConfigureAwait(false)|};
                _ = await {|PA0003:value.ConfigureAwait(false)|};
                await {|PA0003:valueTask.ConfigureAwait(false)|};
                await {|PA0003:task.ConfigureAwait(ConfigureAwaitOptions.None)|};
                await using ({|PA0003:resource.ConfigureAwait(false)|}) { }
                await task.ConfigureAwait(true);
                await task.ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext);
            }

            static async Task Ordinary(Task task) => await task.ConfigureAwait(false);
        }
        """);

    [Fact]
    public Task The_fix_removes_it() => Verify.CodeFixAsync<ConfigureAwaitCodeFix>(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task<int> M(Task task, Task<int> value)
            {
                await {|PA0003:task.ConfigureAwait(false)|};
                return await {|PA0003:value.ConfigureAwait(false)|} + 1;
            }
        }
        """, Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task<int> M(Task task, Task<int> value)
            {
                await task;
                return await value + 1;
            }
        }
        """);
}
