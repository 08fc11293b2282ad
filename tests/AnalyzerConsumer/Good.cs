using PriorityAsync;
using PriorityAsync.MessagePump;

namespace AnalyzerConsumer;

/// <summary>A handler that follows the one rule: nothing here may be reported (.ci/consumer.sh).</summary>
internal static class Good
{
    public static PriorityMessagePump Create(IMessageSource source, PriorityScheduler scheduler) =>
        new(
            source,
            async (context, cancellationToken) =>
            {
                for (var chunk = 0; chunk < 10; chunk++)
                {
                    Thread.SpinWait(1_000); // a chunk of CPU work
                    await PriorityScheduler.YieldIfNeeded(); // then due renewals run first
                }

                await Task.Delay(1, cancellationToken);
            },
            scheduler);
}
