namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
    /// <summary>Looks for work for a while without sleeping; true when some is ready.</summary>
    private bool Search()
    {
        var spinner = default(SpinWait);
        for (var i = 0; i < SearchSpins; i++)
        {
            if (IsReady(AllLanes) || Acceptance >= AcceptanceState.Closing)
            {
                return true;
            }

            spinner.SpinOnce(sleep1Threshold: -1);
        }

        return IsReady(AllLanes);
    }
}
