namespace PriorityAsync.Tests.Lifecycle;

/// <summary>
/// <see cref="PriorityScheduler"/> is disposable: code that holds a scheduler as its base type (a DI
/// registration, a field typed by the base) can release it, owned timer thread included, without knowing which
/// scheduler it is; disposal through the base is the derived type's own disposal.
/// </summary>
public class DisposeThroughBaseTests
{
    public static TheoryData<string> Kinds() => new() { "multi-thread", "multi-thread, thread-pool workers", "single-thread" };

    [Theory]
    [MemberData(nameof(Kinds))]
    public void A_scheduler_disposed_through_its_base_type_takes_no_more_work(string kind)
    {
        Lane lane;
        using (PriorityScheduler scheduler = Create(kind))
        {
            lane = scheduler.GetLane(LanePriority.Processing);
        }

        Action run = () => lane.Run(static () => { });
        run.Should().ThrowExactly<ObjectDisposedException>().WithMessage("*has been disposed and accepts no new work*");
    }

    private static PriorityScheduler Create(string kind) => kind switch
    {
        "multi-thread" => new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 }),
        "multi-thread, thread-pool workers" => new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, Mode = PriorityWorkerMode.ThreadPool }),
        _ => new PriorityAsyncContext(),
    };
}
