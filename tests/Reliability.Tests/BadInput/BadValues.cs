using PriorityAsync.MessagePump;

namespace PriorityAsync.Reliability.Tests.BadInput;

/// <summary>The bad values tried for each parameter type (null is tried separately, for non-nullable references).</summary>
internal static class BadValues
{
    public static IEnumerable<object?> For(Type type) => (Nullable.GetUnderlyingType(type) ?? type) switch
    {
        var t when t == typeof(int) => [-1, 0, int.MinValue, int.MaxValue],
        var t when t == typeof(long) => [-1L, long.MinValue, long.MaxValue],
        var t when t == typeof(double) => [double.NaN, -1.0, double.PositiveInfinity, 2.0],
        var t when t == typeof(TimeSpan) => [TimeSpan.FromTicks(-1), TimeSpan.MinValue, TimeSpan.MaxValue],
        var t when t == typeof(DateTimeOffset) => [DateTimeOffset.MinValue, DateTimeOffset.MaxValue],
        var t when t == typeof(LanePriority) => [LanePriority.FromRank(PrioritySchedulerOptions.MaxLaneCount - 1)],
        var t when t == typeof(string) => ["", "   "],
        var t when t == typeof(ReadOnlyMemory<byte>) => [ReadOnlyMemory<byte>.Empty],
        var t when t == typeof(IReadOnlyList<ILeasedMessage>) => [Array.Empty<ILeasedMessage>(), new ILeasedMessage?[] { null }],
        _ => [],
    };
}
