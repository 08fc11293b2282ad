namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0004: work sent to the thread pool from lane code.</summary>
public sealed class ThreadPoolTests
{
    [Fact]
    public Task Task_Run_StartNew_and_QueueUserWorkItem_are_reported_in_lane_code() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task M()
            {
                await {|PA0004:Task.Run(() => { })|};
                _ = await {|PA0004:Task.Run(() => Task.FromResult(1))|};
                await {|PA0004:Task.Factory.StartNew(() => { })|};
                await {|PA0004:Task.Factory.StartNew(() => { }, CancellationToken.None, TaskCreationOptions.None, TaskScheduler.Default)|};
                {|PA0004:ThreadPool.QueueUserWorkItem(_ => { })|};
                {|PA0004:ThreadPool.UnsafeQueueUserWorkItem(_ => { }, null)|};
            }
        }
        """);

    [Fact]
    public Task Work_kept_in_a_lane_and_work_outside_lane_code_are_not_reported() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static async Task InLane(Lane lane, TaskScheduler scheduler)
            {
                await lane.Run(() => { });
                await PriorityScheduler.CurrentLane!.Run(() => Task.CompletedTask);
                await Task.Factory.StartNew(() => { }, CancellationToken.None, TaskCreationOptions.None, scheduler);
            }

            static async Task Ordinary()
            {
                await Task.Run(() => { });
                ThreadPool.QueueUserWorkItem(_ => { });
            }
        }
        """);
}
