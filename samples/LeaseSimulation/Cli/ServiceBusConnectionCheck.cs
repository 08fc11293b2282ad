using Azure.Messaging.ServiceBus;

namespace LeaseSimulation.Cli;

/// <summary>Checks the <c>--connection</c> of <c>--broker servicebus</c> before any run starts.</summary>
public static class ServiceBusConnectionCheck
{
    /// <summary>Throws when <paramref name="connection"/> is no Service Bus connection string naming a queue.</summary>
    /// <param name="connection">The value of <c>--connection</c>.</param>
    /// <exception cref="OptionException">It does not parse, or names no queue with <c>EntityPath</c>.</exception>
    public static void ThrowIfInvalid(string connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        ServiceBusConnectionStringProperties properties;
        try
        {
            properties = ServiceBusConnectionStringProperties.Parse(connection);
        }
        catch (Exception ex) when (ex is ArgumentException or FormatException)
        {
            throw new OptionException("--connection", $"Option --connection is not a valid Service Bus connection string: {ex.Message.Split('\n')[0]}");
        }

        if (properties.Endpoint is null)
        {
            throw new OptionException("--connection", "Option --connection is not a valid Service Bus connection string: it has no Endpoint=sb://<namespace>.");
        }

        if (string.IsNullOrWhiteSpace(properties.EntityPath))
        {
            throw new OptionException("--connection", "Option --connection must name the run's queue with EntityPath=<queue> (an existing, empty queue whose lock duration is the scaled lease; leave --connection out for the in-process test broker).");
        }
    }
}
