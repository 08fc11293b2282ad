using PriorityAsync.MessagePump.Tests.Pump;

namespace PriorityAsync.MessagePump.Tests.Transport;

/// <summary>
/// The settlement contract a transport written outside the library implements (<see cref="ISettleableMessage"/>): the
/// pump settles it by value, a handler's settle call on the message is claimed and counted once, a transport's own
/// settlement (defer, with its data) goes through <see cref="MessageContext.SettleAsync"/>, and an outcome the broker
/// cannot confirm is counted as its kind and as unconfirmed. Virtual time, one thread.
/// </summary>
public class SettlementContractTests
{
    [Fact]
    public void A_third_party_transport_defers_with_its_own_data_and_the_pump_counts_it_once()
    {
        var data = new Dictionary<string, object> { ["step"] = 2 };
        Exception? nullSettlement = null;
        var (source, stats, _) = Run(["m1"], async context =>
        {
            nullSettlement = await Record.ExceptionAsync(() => context.SettleAsync(null!));
            (await context.SettleAsync(MessageSettlement.Defer(data))).Should().BeTrue();
        });

        nullSettlement.Should().BeOfType<ArgumentNullException>().Which.ParamName.Should().Be("settlement");

        source.Settlements.Should().ContainSingle().Which.Should().Match<MessageSettlement>(s => s.Kind == SettlementKind.Defer && ReferenceEquals(s.TransportData, data));
        stats.Should().BeEquivalentTo(new { Received = 1, Deferred = 1, Completed = 0, SettleFailures = 0, UnconfirmedSettlements = 0 });
    }

    [Theory]
    [InlineData("complete")]
    [InlineData("abandon")]
    [InlineData("dead-letter")]
    public void A_handlers_settle_call_on_a_third_party_message_goes_through_the_pump_once(string settlement)
    {
        var (source, stats, _) = Run(["m1"], async context =>
        {
            if (context.Message.DeliveryCount > 1)
            {
                return;
            }

            await (settlement switch
            {
                "complete" => context.Message.CompleteAsync(),
                "abandon" => context.Message.AbandonAsync(),
                _ => context.Message.DeadLetterAsync("poison"),
            });
            context.LeaseState.Should().Be(MessageLeaseState.SettlementClaimed, "the pump claimed the handler's settlement");
        });

        source.Settlements[0].ToString().Should().Be(settlement);
        source.Settlements.Should().HaveCount(settlement == "abandon" ? 2 : 1, "the pump does not settle a delivery again after the handler's own call (an abandoned one comes back and is completed)");
        stats.Should().BeEquivalentTo(new
        {
            Completed = settlement == "dead-letter" ? 0 : 1,
            Abandoned = settlement == "abandon" ? 1 : 0,
            DeadLettered = settlement == "dead-letter" ? 1 : 0,
            SettleFailures = 0,
        });
    }

    [Fact]
    public void A_settlement_the_broker_cannot_confirm_is_counted_as_its_kind_and_as_unconfirmed_and_logged()
    {
        var (_, stats, logger) = Run(["stale-1", "m2"], _ => Task.CompletedTask);

        stats.Should().BeEquivalentTo(new { Received = 2, Completed = 2, UnconfirmedSettlements = 1, SettleFailures = 0 });
        logger.Entries.Should().ContainSingle(e => e.EventId.Id == 16).Which.Message.Should().Contain("stale-1");
    }

    [Fact]
    public void A_transports_own_settlement_on_a_message_that_cannot_carry_it_is_a_settle_failure_not_a_crash()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(new byte[] { 1 }, "m1");
        var logger = new ListLogger();
        bool? deferred = null;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(queue, async (context, _) => deferred = await context.SettleAsync(MessageSettlement.Defer()), scheduler, logger: logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => deferred is not null, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        deferred.Should().BeFalse();
        stats.Should().BeEquivalentTo(new { Received = 1, Deferred = 0, SettleFailures = 1 });
        logger.Entries.Should().ContainSingle(e => e.EventId.Id == 23).Which.Exception.Should().BeOfType<NotSupportedException>();
    }

    [Fact]
    public void A_dead_letter_reason_that_is_empty_or_white_space_is_refused_naming_the_argument()
    {
        var act = () => MessageSettlement.DeadLetter("  ");

        act.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("reason");
        MessageSettlement.DeadLetter(null).Reason.Should().BeNull("no reason: the broker's default, or one the transport data carries");
        MessageSettlement.Abandon().Should().BeSameAs(MessageSettlement.Abandon(), "a settlement without data is shared");
    }

    private static (ParkingSource Source, MessagePumpStatistics Stats, ListLogger Logger) Run(string[] ids, Func<MessageContext, Task> handler)
    {
        var clock = new VirtualTimeProvider();
        var source = new ParkingSource(new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) }));
        foreach (var id in ids)
        {
            source.Inner.Send(new byte[] { 1 }, id);
        }

        var logger = new ListLogger();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(source, (context, _) => handler(context), scheduler, logger: logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => source.Inner.GetStatistics() is { InFlight: 0, Available: 0, AwaitingRedelivery: 0 } && source.Settlements.Count >= ids.Length, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        return (source, stats!, logger);
    }

    /// <summary>
    /// A transport of its own over an in-memory queue, written only against the public contract: a defer parks the
    /// message (with its data) and removes it from the queue; a complete of a message whose id starts with <c>stale</c>
    /// is one the broker cannot confirm.
    /// </summary>
    private sealed class ParkingSource(InMemoryQueue inner) : IMessageSource
    {
        private readonly List<MessageSettlement> _settlements = [];

        public InMemoryQueue Inner => inner;

        public IReadOnlyList<MessageSettlement> Settlements
        {
            get
            {
                lock (_settlements)
                {
                    return [.. _settlements];
                }
            }
        }

        public TimeSpan? LockDuration => ((IMessageSource)inner).LockDuration;

        public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            await ((IMessageSource)inner).ReceiveAsync(cancellationToken) is { } message ? new ParkingMessage(message, this) : null;

        private void Record(MessageSettlement settlement)
        {
            lock (_settlements)
            {
                _settlements.Add(settlement);
            }
        }

        private sealed class ParkingMessage(ILeasedMessage inner, ParkingSource source) : WrappedSettleableMessage(inner)
        {
            public override async Task<SettlementOutcome> SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken = default)
            {
                source.Record(settlement);
                await (settlement.Kind switch
                {
                    SettlementKind.Abandon => Inner.AbandonAsync(cancellationToken),
                    SettlementKind.DeadLetter => Inner.DeadLetterAsync(settlement.Reason ?? "none", cancellationToken),
                    _ => Inner.CompleteAsync(cancellationToken), // a defer parks it: gone from the queue
                });
                return settlement.Kind == SettlementKind.Complete && MessageId.StartsWith("stale", StringComparison.Ordinal)
                    ? SettlementOutcome.Unconfirmed
                    : SettlementOutcome.Confirmed;
            }
        }
    }
}
