namespace PriorityAsync.MessagePump.Hosting;

/// <summary>
/// Processes one message of a hosted <see cref="PriorityMessagePump"/>. Registered with
/// <see cref="MessagePumpBuilder.WithHandler{THandler}"/>: the pump resolves it from a new dependency injection scope
/// for each message and disposes the scope when the handler has finished, whether it returned or threw.
/// </summary>
public interface IMessageHandler
{
    /// <summary>Processes one message: return to complete it, throw to abandon it (it is then delivered again).</summary>
    /// <param name="context">The message, its lease and the lanes of the pump.</param>
    /// <param name="cancellationToken">Cancelled when the lease is lost or the pump's stop times out.</param>
    /// <returns>A task that completes when the message has been processed.</returns>
    Task HandleAsync(MessageContext context, CancellationToken cancellationToken);
}
