namespace PriorityAsync.MessagePump;

/// <summary>
/// The leases a keeper keeps, ordered by when each must be renewed (<see cref="LeaseHandle.RenewDueTicks"/>): an
/// intrusive doubly linked list through the handles themselves, so that adding and dropping a lease allocates nothing
/// and dropping is O(1). A lease is added after the one due just before it, searching from the latest: new and just
/// renewed leases are due last, so an add is O(1) in practice. Not thread-safe: the keeper guards it with its lock.
/// </summary>
internal sealed class LeaseSchedule
{
    private LeaseHandle? _first;
    private LeaseHandle? _last;

    /// <summary>Gets how many leases are scheduled.</summary>
    public int Count { get; private set; }

    /// <summary>Gets the lease due first, or <see langword="null"/> when none is scheduled.</summary>
    public LeaseHandle? First => _first;

    /// <summary>Schedules <paramref name="context"/>, which must not be scheduled, by its due time.</summary>
    /// <returns>Whether it is now the lease due first.</returns>
    public bool Add(LeaseHandle context)
    {
        var after = _last;
        while (after is not null && after.RenewDueTicks > context.RenewDueTicks)
        {
            after = after.SchedulePrevious;
        }

        context.SchedulePrevious = after;
        context.ScheduleNext = after is null ? _first : after.ScheduleNext;
        if (context.ScheduleNext is null)
        {
            _last = context;
        }
        else
        {
            context.ScheduleNext.SchedulePrevious = context;
        }

        if (after is null)
        {
            _first = context;
        }
        else
        {
            after.ScheduleNext = context;
        }

        context.IsScheduled = true;
        Count++;
        return after is null;
    }

    /// <summary>Drops <paramref name="context"/> when it is scheduled; does nothing otherwise.</summary>
    public void Remove(LeaseHandle context)
    {
        if (!context.IsScheduled)
        {
            return;
        }

        if (context.SchedulePrevious is null)
        {
            _first = context.ScheduleNext;
        }
        else
        {
            context.SchedulePrevious.ScheduleNext = context.ScheduleNext;
        }

        if (context.ScheduleNext is null)
        {
            _last = context.SchedulePrevious;
        }
        else
        {
            context.ScheduleNext.SchedulePrevious = context.SchedulePrevious;
        }

        context.SchedulePrevious = null;
        context.ScheduleNext = null;
        context.IsScheduled = false;
        Count--;
    }

    /// <summary>
    /// Takes, from the first, the leases that may be renewed at <paramref name="nowTicks"/> (their
    /// <see cref="LeaseHandle.RenewEarliestTicks"/> or its due time has come), at most <paramref name="max"/>, into <paramref name="into"/>.
    /// </summary>
    public void TakeDue(long nowTicks, int max, List<LeaseHandle> into)
    {
        while (_first is { } first && (first.RenewEarliestTicks <= nowTicks || first.RenewDueTicks <= nowTicks) && into.Count < max)
        {
            Remove(first);
            into.Add(first);
        }
    }
}
