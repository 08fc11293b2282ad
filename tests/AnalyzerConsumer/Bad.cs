using PriorityAsync.MessagePump;

namespace AnalyzerConsumer;

/// <summary>A handler that breaks the one rule four ways: each line marked must be reported (.ci/consumer.sh).</summary>
internal static class Bad
{
    public static PriorityMessagePump Create(IMessageSource source, PriorityAsync.PriorityScheduler scheduler) =>
        new(
            source,
            async (context, cancellationToken) =>
            {
                var sum = 0L;
                for (var i = 0; i < 1_000_000; i++) // PA0001: CPU work that never yields
                {
                    sum += i;
                }

                Thread.Sleep(10); // PA0002: blocks the lane's thread
                await Task.Delay(1, cancellationToken).ConfigureAwait(false); // PA0003: leaves the lane
                await Task.Run(() => sum++, cancellationToken); // PA0004: the work leaves the scheduler
            },
            scheduler);
}
