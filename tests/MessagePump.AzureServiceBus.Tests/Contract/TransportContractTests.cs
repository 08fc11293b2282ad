using PriorityAsync.MessagePump.AzureServiceBus.Tests.EndToEnd;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Contract;

/// <summary>
/// The transport contract (<see cref="IMessageSource"/>, <see cref="ILeasedMessage"/>), one suite run against every
/// transport: in-memory, Service Bus (the test broker) and PostgreSQL. Each case uses the interfaces only.
/// </summary>
[Collection(Support.RealTimeCollection.Name)]
public sealed class TransportContractTests
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(5);

    public static TheoryData<string> Transports() => ContractTransports.All();

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task A_batch_receive_returns_what_was_sent_in_order_each_locked_once(string name)
    {
        await using var transport = await ContractTransports.CreateAsync(name);
        var source = await transport.CreateQueueAsync(LockDuration);
        foreach (var id in new[] { "a", "b", "c" })
        {
            await transport.SendAsync(id, $"body {id}");
        }

        var batch = await SourceEndToEndTests.ReceiveAtLeastAsync(source, 3);

        batch.Select(m => m.MessageId).Should().Equal("a", "b", "c");
        batch.Should().OnlyContain(m => m.DeliveryCount == 1 && m.LockedUntil > DateTimeOffset.MinValue);
        System.Text.Encoding.UTF8.GetString(batch[1].Body.Span).Should().Be("body b");
        (await source.ReceiveBatchAsync(3)).Should().BeEmpty("every message is locked");
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task Complete_removes_abandon_redelivers_and_dead_letter_removes(string name)
    {
        await using var transport = await ContractTransports.CreateAsync(name);
        var source = await transport.CreateQueueAsync(LockDuration);
        foreach (var id in new[] { "done", "again", "poison" })
        {
            await transport.SendAsync(id, id);
        }

        var batch = (await SourceEndToEndTests.ReceiveAtLeastAsync(source, 3)).ToDictionary(m => m.MessageId);
        await batch["done"].CompleteAsync();
        await batch["again"].AbandonAsync();
        await batch["poison"].DeadLetterAsync("poison");

        var redelivered = (await SourceEndToEndTests.ReceiveAtLeastAsync(source, 1)).Single();
        redelivered.MessageId.Should().Be("again");
        redelivered.DeliveryCount.Should().Be(2);
        await redelivered.CompleteAsync();
        (await source.ReceiveBatchAsync(3)).Should().BeEmpty();
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task A_settled_message_cannot_be_renewed_or_settled_again(string name)
    {
        await using var transport = await ContractTransports.CreateAsync(name);
        var source = await transport.CreateQueueAsync(LockDuration);
        await transport.SendAsync("m", "m");
        var message = (await SourceEndToEndTests.ReceiveAtLeastAsync(source, 1)).Single();

        await message.CompleteAsync();

        await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        await message.Invoking(m => m.AbandonAsync()).Should().ThrowAsync<LeaseLostException>();
        await message.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>();
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task Renew_moves_LockedUntil_forward(string name)
    {
        await using var transport = await ContractTransports.CreateAsync(name);
        var source = await transport.CreateQueueAsync(LockDuration);
        await transport.SendAsync("m", "m");
        var message = (await SourceEndToEndTests.ReceiveAtLeastAsync(source, 1)).Single();
        var first = message.LockedUntil;

        var renewed = await message.RenewLockAsync();

        renewed.Should().BeOnOrAfter(first);
        message.LockedUntil.Should().Be(renewed);
        await message.CompleteAsync();
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task A_lock_that_ran_out_is_lost_and_the_message_is_delivered_again_and_completed_once(string name)
    {
        await using var transport = await ContractTransports.CreateAsync(name);
        var source = await transport.CreateQueueAsync(LockDuration);
        await transport.SendAsync("m", "m");
        var message = (await SourceEndToEndTests.ReceiveAtLeastAsync(source, 1)).Single();

        await transport.ExpireLocksAsync(LockDuration);

        await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        var again = (await SourceEndToEndTests.ReceiveAtLeastAsync(source, 1)).Single();
        again.MessageId.Should().Be("m");
        again.DeliveryCount.Should().Be(2);
        await again.CompleteAsync();
        (await source.ReceiveBatchAsync(1)).Should().BeEmpty();
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task Bad_batch_sizes_are_rejected_naming_the_argument(string name)
    {
        await using var transport = await ContractTransports.CreateAsync(name);
        var source = await transport.CreateQueueAsync(LockDuration);

        (await source.Invoking(s => s.ReceiveBatchAsync(0)).Should().ThrowAsync<ArgumentOutOfRangeException>()).Which.ParamName.Should().Be("maxMessages");
    }

    [PostgresFact]
    public void The_PostgreSQL_transport_is_in_the_suite_when_a_server_is_configured()
    {
        ((IEnumerable<object[]>)ContractTransports.All()).Select(row => (string)row[0]).ToList().Should().Contain(ContractTransports.PostgreSql);
    }
}
