using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// The README's dialect, "SASL and CBS": a connection negotiates SASL MSSBCBS (what the 7.x client sends) or ANONYMOUS,
/// and every <c>$cbs</c> put-token is answered 202. Spoken with Microsoft.Azure.Amqp directly: the client hides both.
/// </summary>
[Trait("Conformance", "Sasl")]
public sealed class ConformanceSasl
{
    [Theory]
    [InlineData("MSSBCBS")]
    [InlineData("ANONYMOUS")]
    public async Task A_connection_over_SASL_MSSBCBS_or_ANONYMOUS_opens_and_any_put_token_is_accepted_with_202(string mechanism)
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var amqp = await RawAmqp.ConnectAsync(harness.Broker.Port, mechanism);
        using var request = AmqpMessage.Create(new AmqpValue { Value = "SharedAccessSignature sr=x&sig=not-checked&se=0&skn=nobody" });
        request.ApplicationProperties.Map["operation"] = "put-token";
        request.ApplicationProperties.Map["type"] = "servicebus.windows.net:sastoken";
        request.ApplicationProperties.Map["name"] = $"amqp://127.0.0.1:{harness.Broker.Port}/queue";

        using var response = await amqp.RequestAsync("$cbs", request);

        response.ApplicationProperties.Map["status-code"].Should().Be(202);
    }
}
