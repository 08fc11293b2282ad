using System.Collections.Concurrent;
using System.Text;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.EndToEnd;

/// <summary>
/// Every public way a handler settles a message (the pump's context, the leased message itself, a hosted handler's
/// context) counts once as what it was, with the real SDK client against the test broker. Outcomes only, never durations.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class SettlementPathTests(ITestOutputHelper output)
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(5);

    [Theory]
    [InlineData("leased message")]
    [InlineData("context")]
    public async Task A_dead_letter_with_a_description_is_counted_as_a_dead_letter_and_the_message_is_not_settled_again(string path)
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = CreateQueue(sb, count: 1);
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), Options());
        var logger = new ListLogger();

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, _) =>
            {
                if (path == "context")
                {
                    (await context.DeadLetterAsync("Poison", "bad body")).Should().BeTrue();
                }
                else
                {
                    await ((ServiceBusLeasedMessage)context.Message).DeadLetterAsync("Poison", "bad body");
                }
            },
            () => queue.DeadLetterCount == 1,
            "the dead letter",
            logger: logger);

        output.WriteLine($"pump: {stats}");
        output.WriteLine(logger.ToString());
        var deadLetter = queue.DeadLetters.Should().ContainSingle().Subject;
        deadLetter.Reason.Should().Be("Poison");
        deadLetter.Description.Should().Be("bad body");
        stats.Should().BeEquivalentTo(new { Received = 1, DeadLettered = 1, Completed = 0, Abandoned = 0, LeasesLost = 0, SettleFailures = 0 });
        logger.Entries.Should().NotContain(e => e.Level >= LogLevel.Error);
        queue.CompletedCount.Should().Be(0);
        queue.LockedCount.Should().Be(0);
    }

    [Theory]
    [InlineData("complete")]
    [InlineData("abandon")]
    public async Task A_complete_or_abandon_on_the_leased_message_itself_is_counted_as_what_it_was(string settlement)
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = CreateQueue(sb, count: 1);
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), Options());
        var deliveries = new ConcurrentQueue<int>();

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, _) =>
            {
                deliveries.Enqueue(context.Message.DeliveryCount);
                if (context.Message.DeliveryCount == 1)
                {
                    var leased = (ServiceBusLeasedMessage)context.Message;
                    await (settlement == "complete" ? leased.CompleteAsync() : leased.AbandonAsync());
                    context.LeaseState.Should().Be(MessageLeaseState.SettlementClaimed);
                }
            },
            () => queue.CompletedCount == 1,
            "the completion");

        output.WriteLine($"pump: {stats}");
        deliveries.Should().Equal(settlement == "complete" ? [1] : [1, 2]);
        stats.Should().BeEquivalentTo(new
        {
            Completed = 1,
            Abandoned = settlement == "abandon" ? 1 : 0,
            LeasesLost = 0,
            SettleFailures = 0,
        });
        queue.CompletionsOf("m0").Should().Be(1);
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_hosted_handler_dead_letters_with_a_description_through_its_context()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(Encoding.UTF8.GetBytes("m0"), "m0");
        var builder = Host.CreateApplicationBuilder();
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Orders:ServiceBus:ConnectionString"] = broker.ConnectionString,
            ["Orders:ServiceBus:QueueName"] = "orders",
            ["Orders:ServiceBus:LockDuration"] = "00:00:30",
            ["Orders:ServiceBus:MaxWaitTime"] = "00:00:00.300",
            ["Orders:Pump:EmptyReceiveDelay"] = "00:00:00.100",
        });
        var settled = new ConcurrentQueue<bool>();
        builder.Services
            .AddServiceBusMessagePump("orders", builder.Configuration.GetSection("Orders:ServiceBus"))
            .BindConfiguration("Orders:Pump")
            .WithHandler(async (context, _) => settled.Enqueue(await context.DeadLetterAsync("Poison", "bad body")));
        using var host = builder.Build();

        await host.StartAsync();
        await Bounded.UntilAsync(() => Task.FromResult(queue.DeadLetterCount == 1), SbHarness.HangBound, "the dead letter");
        await host.StopAsync();

        settled.Should().Equal(true);
        var deadLetter = queue.DeadLetters.Should().ContainSingle().Subject;
        deadLetter.Reason.Should().Be("Poison");
        deadLetter.Description.Should().Be("bad body");
        queue.CompletedCount.Should().Be(0);
        queue.LockedCount.Should().Be(0);
    }

    private static ServiceBusTestQueue CreateQueue(SbHarness sb, int count)
    {
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration, MaxDeliveryCount = 10 });
        for (var i = 0; i < count; i++)
        {
            queue.Send(Encoding.UTF8.GetBytes($"m{i}"), $"m{i}");
        }

        return queue;
    }

    private static ServiceBusSourceOptions Options() => new() { LockDuration = LockDuration, MaxWaitTime = TimeSpan.FromMilliseconds(200) };
}
