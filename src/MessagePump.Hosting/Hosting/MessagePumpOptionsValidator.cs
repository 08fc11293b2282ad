using Microsoft.Extensions.Options;

namespace PriorityAsync.MessagePump.Hosting;

/// <summary>
/// Checks the named <see cref="MessagePumpOptions"/> of one pump with the pump's own rules (the ones that do not
/// depend on the source or the scheduler; those are checked again when the pump is created).
/// </summary>
internal sealed class MessagePumpOptionsValidator(string pumpName) : IValidateOptions<MessagePumpOptions>
{
    public ValidateOptionsResult Validate(string? name, MessagePumpOptions options)
    {
        if (!string.Equals(name, pumpName, StringComparison.Ordinal))
        {
            return ValidateOptionsResult.Skip;
        }

        try
        {
            options.Validate(lockDuration: null, scheduler: null);
            return ValidateOptionsResult.Success;
        }
        catch (ArgumentException exception)
        {
            return ValidateOptionsResult.Fail($"Message pump '{pumpName}': {exception.Message}");
        }
    }
}
