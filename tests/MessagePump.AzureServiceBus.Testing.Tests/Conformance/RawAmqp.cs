using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Sasl;
using Microsoft.Azure.Amqp.Transport;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// A connection to the broker with Microsoft.Azure.Amqp itself, for what the 7.x client does not let a test choose (the
/// SASL mechanism, the request sent to a node).
/// </summary>
internal sealed class RawAmqp : IAsyncDisposable
{
    private readonly AmqpConnection _connection;
    private readonly AmqpSession _session;

    private RawAmqp(AmqpConnection connection, AmqpSession session)
    {
        _connection = connection;
        _session = session;
    }

    /// <summary>Opens a connection negotiating <paramref name="mechanism"/> (ANONYMOUS, MSSBCBS) and one AMQP session on it.</summary>
    public static async Task<RawAmqp> ConnectAsync(int port, string mechanism)
    {
        var settings = new AmqpSettings();
        var sasl = new SaslTransportProvider();
        sasl.Versions.Add(new AmqpVersion(1, 0, 0));
        sasl.AddHandler(new SaslAnonymousHandler(mechanism));
        settings.TransportProviders.Add(sasl);
        var amqp = new AmqpTransportProvider();
        amqp.Versions.Add(new AmqpVersion(1, 0, 0));
        settings.TransportProviders.Add(amqp);
        var initiator = new AmqpTransportInitiator(settings, new TcpTransportSettings { Host = "127.0.0.1", Port = port });
        var transport = await initiator.ConnectTaskAsync(BrokerHarness.HangBound);
        var connection = new AmqpConnection(transport, settings, new AmqpConnectionSettings { ContainerId = "conformance", HostName = "127.0.0.1" });
        try
        {
            await connection.OpenAsync(BrokerHarness.HangBound);
            var session = connection.CreateSession(new AmqpSessionSettings());
            await session.OpenAsync(BrokerHarness.HangBound);
            return new RawAmqp(connection, session);
        }
        catch
        {
            connection.SafeClose();
            throw;
        }
    }

    /// <summary>Sends one request to the node at <paramref name="address"/> ($cbs, an entity's $management) and returns its answer.</summary>
    public async Task<AmqpMessage> RequestAsync(string address, AmqpMessage request)
    {
        var link = new RequestResponseAmqpLink("request", $"request-{Guid.NewGuid():N}", _session, address);
        await link.OpenAsync(BrokerHarness.HangBound);
        try
        {
            return await link.RequestAsync(request, BrokerHarness.HangBound);
        }
        finally
        {
            link.SafeClose();
        }
    }

    public ValueTask DisposeAsync()
    {
        _connection.SafeClose();
        return ValueTask.CompletedTask;
    }
}
