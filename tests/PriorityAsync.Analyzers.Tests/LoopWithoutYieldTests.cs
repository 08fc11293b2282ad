namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0001: a loop in lane code that can run on without reaching an await.</summary>
public sealed class LoopWithoutYieldTests
{
    [Fact]
    public Task Every_kind_of_loop_that_never_awaits_is_reported() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task M(List<int> items)
            {
                var sum = 0;
                {|PA0001:for|} (var i = 0; i < items.Count; i++) sum += items[i];
                {|PA0001:foreach|} (var item in items) { sum += item; }
                {|PA0001:foreach|} (var (a, b) in new[] { (1, 2) }) { sum += a + b; }
                {|PA0001:while|} (sum > 0) { sum--; }
                {|PA0001:do|} { sum++; } while (sum < 10);
                await Task.Yield();
            }
        }
        """);

    [Fact]
    public Task Nested_loops_that_never_yield_are_reported_once_at_the_outer_loop() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static int M(int[][] rows)
            {
                var sum = 0;
                {|PA0001:foreach|} (var row in rows)
                {
                    foreach (var cell in row)
                    {
                        sum += cell;
                    }
                }

                return sum;
            }
        }
        """);

    [Fact]
    public Task Loops_that_await_or_check_should_yield_are_not_reported() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task M(List<int> items, MessageContext context, PriorityScheduler scheduler, Lane lane, IAsyncEnumerable<int> stream)
            {
                var sum = 0;
                foreach (var item in items) { sum += item; await PriorityScheduler.YieldIfNeeded(); }
                foreach (var item in items) { sum += item; if (item % 2 == 0) { await Task.Delay(1); } }
                foreach (var item in items) { sum += item; if (scheduler.ShouldYield) { await PriorityScheduler.YieldIfNeeded(); } }
                foreach (var item in items) { if (context.ShouldYield) { break; } sum += item; }
                while (!lane.HasMoreUrgentWork) { sum++; }
                await foreach (var item in stream) { sum += item; }
            }
        }
        """);

    [Fact]
    public Task The_chunked_form_an_inner_loop_in_an_outer_loop_that_yields_is_not_reported() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task<int> M(int[][] chunks)
            {
                var sum = 0;
                foreach (var chunk in chunks)
                {
                    for (var i = 0; i < chunk.Length; i++)
                    {
                        sum += chunk[i];
                    }

                    await PriorityScheduler.YieldIfNeeded();
                }

                return sum;
            }
        }
        """);

    [Fact]
    public Task Loops_outside_lane_code_and_in_work_sent_elsewhere_are_not_reported() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            static int Ordinary(List<int> items)
            {
                var sum = 0;
                foreach (var item in items) { sum += item; }
                return sum;
            }

            [LaneCode]
            static Task M(List<int> items) => {|PA0004:Task.Run(() => { foreach (var item in items) { Console.WriteLine(item); } })|};
        }
        """);

    [Fact]
    public Task The_fix_awaits_YieldIfNeeded_at_the_end_of_the_body() => Verify.CodeFixAsync<YieldInLoopCodeFix>(Verify.Usings + """
        static class C
        {
            static Task M(Lane lane, List<int> items) => lane.Run(async () =>
            {
                var sum = 0;
                {|PA0001:foreach|} (var item in items)
                {
                    sum += item;
                }

                await Task.Yield();
            });
        }
        """, Verify.Usings + """
        static class C
        {
            static Task M(Lane lane, List<int> items) => lane.Run(async () =>
            {
                var sum = 0;
                foreach (var item in items)
                {
                    sum += item;
                    await PriorityScheduler.YieldIfNeeded();
                }

                await Task.Yield();
            });
        }
        """);

    [Fact]
    public Task The_fix_makes_a_block_of_a_single_statement_body_and_adds_the_using_directive() => Verify.CodeFixAsync<YieldInLoopCodeFix>("""
        using System.Threading.Tasks;

        static class C
        {
            [PriorityAsync.LaneCode]
            static async Task<int> M(int count)
            {
                var sum = 0;
                {|PA0001:for|} (var i = 0; i < count; i++)
                    sum += i;
                await Task.Yield();
                return sum;
            }
        }
        """, """
        using System.Threading.Tasks;
        using PriorityAsync;

        static class C
        {
            [PriorityAsync.LaneCode]
            static async Task<int> M(int count)
            {
                var sum = 0;
                for (var i = 0; i < count; i++)
                {
                    sum += i;
                    await PriorityScheduler.YieldIfNeeded();
                }
                await Task.Yield();
                return sum;
            }
        }
        """);

    [Fact]
    public Task Where_the_function_is_not_async_the_fix_adds_a_ShouldYield_check() => Verify.CodeFixAsync<YieldInLoopCodeFix>(Verify.Usings + """
        static class C
        {
            static Task M(Lane lane, List<int> items) => lane.Run(() =>
            {
                {|PA0001:foreach|} (var item in items)
                {
                    Console.WriteLine(item);
                }
            });
        }
        """, Verify.Usings + """
        static class C
        {
            static Task M(Lane lane, List<int> items) => lane.Run(() =>
            {
                foreach (var item in items)
                {
                    Console.WriteLine(item);
                    if (PriorityScheduler.Current?.ShouldYield == true)
                    {
                        // A more urgent lane has work: end this slice here and continue the rest in a new work item of this lane.
                    }
                }
            });
        }
        """);
}
