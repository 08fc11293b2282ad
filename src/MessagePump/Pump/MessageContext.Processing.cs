namespace PriorityAsync.MessagePump;

/// <summary>
/// The steps of a message's processing (<see cref="PriorityMessagePump.RunHandler"/>, then settling in the lease lane,
/// then finishing), driven by the context itself: it is the work item queued into each lane, and the continuation
/// of a handler or settlement that does not complete at once. A message whose handler and settlement complete at once
/// allocates nothing here.
/// </summary>
public sealed partial class MessageContext : ILaneWorkItem
{
    /// <summary>The next step of processing.</summary>
    internal enum ProcessingStep
    {
        /// <summary>Run the handler (processing lane).</summary>
        Handler,

        /// <summary>The handler's task has completed: record it.</summary>
        Handled,

        /// <summary>Settle (lease lane).</summary>
        Settle,

        /// <summary>The settlement's task has completed: finish.</summary>
        Settled,
    }

    /// <summary>
    /// Queues the handler into <paramref name="lane"/> as tracked work, with this context as the queued item (no
    /// delegate, closure or task per message); the caller's execution context flows to the handler as with
    /// <see cref="Lane.Run(Func{Task})"/>. Throws where <c>Lane.Run</c> throws.
    /// </summary>
    internal void StartProcessing(Lane lane)
    {
        _step = ProcessingStep.Handler;
        _stepContext = ExecutionContext.Capture();
        lane.StartTracked(this);
    }

    /// <summary>Queues <paramref name="step"/> into <paramref name="lane"/>; the current execution context flows to it, as across an await.</summary>
    internal void ContinueIn(Lane lane, ProcessingStep step)
    {
        _step = step;
        _stepContext = ExecutionContext.Capture();
        lane.Post(this);
    }

    /// <summary>
    /// Runs <paramref name="step"/> once <paramref name="task"/> completes, as an await in the current lane would: posted
    /// back to the lane (never through the thread pool, which would let a virtual clock run ahead of it), in the current
    /// execution context.
    /// </summary>
    internal void ContinueWhenDone(Task task, ProcessingStep step)
    {
        _step = step;
        _awaited = task;
        _resume ??= RunStep;
        task.GetAwaiter().OnCompleted(_resume);
    }

    /// <summary>Runs in the lane the step was queued into.</summary>
    void ILaneWorkItem.Execute()
    {
        var captured = _stepContext;
        _stepContext = null;
        if (captured is null)
        {
            RunStep();
            return;
        }

        ExecutionContext.Run(captured, static state => ((MessageContext)state!).RunStep(), this);
    }

    private void RunStep()
    {
        var awaited = _awaited;
        _awaited = null;
        try
        {
            switch (_step)
            {
                case ProcessingStep.Handler:
                    Pump.RunHandler(this);
                    break;
                case ProcessingStep.Handled:
                    Pump.OnHandled(this, awaited);
                    break;
                case ProcessingStep.Settle:
                    Pump.Settle(this);
                    break;
                default:
                    Pump.EndProcessing(this);
                    break;
            }
        }
        catch (Exception)
        {
            // Only a throwing logger or telemetry listener gets here, after each step has queued the next (or finished
            // the message) in its finally block. As in the async method these steps replace, it must neither end the
            // scheduler's run (a posted callback's exception would) nor stop the message: the next step still runs.
        }
    }
}
