namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0002: blocking on asynchronous work in lane code.</summary>
public sealed class BlockingTests
{
    [Fact]
    public Task Every_blocking_form_is_reported() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static void M(Task task, Task<int> value, ValueTask<int> valueTask)
            {
                _ = {|PA0002:value.Result|};
                _ = {|PA0002:valueTask.Result|};
                {|PA0002:task.Wait()|};
                {|PA0002:task.Wait(TimeSpan.FromSeconds(1))|};
                {|PA0002:task.GetAwaiter().GetResult()|};
                _ = {|PA0002:value.ConfigureAwait(true).GetAwaiter().GetResult()|};
                {|PA0002:Task.WaitAll(task, value)|};
                _ = {|PA0002:Task.WaitAny(task, value)|};
                {|PA0002:Thread.Sleep(10)|};
            }
        }
        """);

    [Fact]
    public Task Awaiting_and_blocking_outside_lane_code_are_not_reported() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task<int> InLane(Task task, Task<int> value)
            {
                await task;
                await Task.WhenAll(task, value);
                await Task.Delay(10);
                return await value;
            }

            static int Ordinary(Task task, Task<int> value)
            {
                task.Wait();
                Thread.Sleep(10);
                return value.Result + value.GetAwaiter().GetResult();
            }
        }
        """);

    [Fact]
    public Task The_fix_awaits_the_task() => Verify.CodeFixAsync<BlockingCodeFix>(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task<int> M(Task task, Task<int> value)
            {
                {|PA0002:task.Wait()|};
                var a = {|PA0002:value.Result|};
                var b = {|PA0002:value.Result|}.ToString();
                return a + {|PA0002:value.GetAwaiter().GetResult()|} + b.Length;
            }
        }
        """, Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task<int> M(Task task, Task<int> value)
            {
                await task;
                var a = await value;
                var b = (await value).ToString();
                return a + await value + b.Length;
            }
        }
        """);

    [Fact]
    public Task The_fix_turns_WaitAll_into_WhenAll_and_Sleep_into_Delay() => Verify.CodeFixAsync<BlockingCodeFix>(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task M(Task first, Task second)
            {
                {|PA0002:Task.WaitAll(first, second)|};
                {|PA0002:Thread.Sleep(TimeSpan.FromMilliseconds(5))|};
            }
        }
        """, Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task M(Task first, Task second)
            {
                await Task.WhenAll(first, second);
                await Task.Delay(TimeSpan.FromMilliseconds(5));
            }
        }
        """);

    [Fact]
    public Task There_is_no_fix_where_the_function_is_not_async_or_no_await_form_exists() => Verify.CodeFixAsync<BlockingCodeFix>(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task M(Task task, Task<int> value)
            {
                {|PA0002:task.Wait(100)|};
                _ = {|PA0002:Task.WaitAny(task, value)|};
                Action sync = () => {|PA0002:Thread.Sleep(1)|};
                await task;
            }
        }
        """, Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task M(Task task, Task<int> value)
            {
                {|PA0002:task.Wait(100)|};
                _ = {|PA0002:Task.WaitAny(task, value)|};
                Action sync = () => {|PA0002:Thread.Sleep(1)|};
                await task;
            }
        }
        """);
}
