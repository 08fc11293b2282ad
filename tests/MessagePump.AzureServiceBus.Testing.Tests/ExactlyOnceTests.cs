using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using Xunit.Abstractions;

namespace MessagePump.AzureServiceBus.Testing.Tests;

/// <summary>
/// Randomised: concurrent receivers complete, abandon, dead-letter or drop messages while the clock expires locks and
/// links are detached; every message must end exactly once as completed or dead-lettered. The seed is printed;
/// replay one with <c>SB_BROKER_SEED=…</c>.
/// </summary>
public sealed class ExactlyOnceTests(ITestOutputHelper output)
{
    private const int MessageCount = 40;

    [Fact]
    public async Task Every_message_ends_exactly_once_as_completed_or_dead_lettered()
    {
        var seed = int.TryParse(Environment.GetEnvironmentVariable("SB_BROKER_SEED"), out var fixedSeed) ? fixedSeed : Random.Shared.Next();
        output.WriteLine($"seed {seed} (replay: SB_BROKER_SEED={seed})");
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 3);
        var queue = harness.Broker.CreateQueue("chaos", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(10), MaxDeliveryCount = 4 });
        await using var sender = harness.Client.CreateSender("chaos");
        using (var batch = await sender.CreateMessageBatchAsync())
        {
            for (var i = 0; i < MessageCount; i++)
            {
                batch.TryAddMessage(new ServiceBusMessage($"m{i}") { MessageId = $"m{i}" }).Should().BeTrue();
            }

            await sender.SendMessagesAsync(batch);
        }

        await using var secondClient = new ServiceBusClient(harness.Broker.ConnectionString, BrokerHarness.ClientOptions(maxRetries: 3));
        using var stop = new CancellationTokenSource(TimeSpan.FromMinutes(2));
        var clients = new[] { harness.Client, secondClient, harness.Client };
        var workers = clients.Select((client, i) => WorkAsync(client, new Random(seed + i), stop.Token)).ToList();
        var random = new Random(seed);
        while (Settled(queue) < MessageCount)
        {
            stop.Token.ThrowIfCancellationRequested();
            await Task.Delay(20, stop.Token);
            switch (random.Next(10))
            {
                case 0:
                    harness.Clock.Advance(TimeSpan.FromSeconds(random.Next(1, 12)));
                    break;
                case 1:
                    await harness.Broker.Faults.DetachReceiveLinksAsync("chaos");
                    break;
                default:
                    if (queue.ActiveCount == 0 && queue.LockedCount > 0)
                    {
                        harness.Clock.Advance(TimeSpan.FromSeconds(10));
                    }

                    break;
            }
        }

        await stop.CancelAsync();
        await Task.WhenAll(workers);

        var deadLettered = queue.DeadLetters.GroupBy(d => d.MessageId).ToDictionary(g => g.Key, g => g.Count(), StringComparer.Ordinal);
        for (var i = 0; i < MessageCount; i++)
        {
            var id = $"m{i}";
            (queue.CompletionsOf(id) + deadLettered.GetValueOrDefault(id)).Should().Be(1, $"{id} ends exactly once (seed {seed})");
        }

        queue.ActiveCount.Should().Be(0);
        queue.LockedCount.Should().Be(0);
        queue.DeadLetterQueue!.ActiveCount.Should().Be(queue.DeadLetterCount);
        output.WriteLine($"completed {queue.CompletedCount}, dead-lettered {queue.DeadLetterCount}, renewals {queue.RenewCount}");
    }

    private static int Settled(ServiceBusTestQueue queue) => queue.CompletedCount + queue.DeadLetterCount;

    private static async Task WorkAsync(ServiceBusClient client, Random random, CancellationToken stop)
    {
        await using var receiver = client.CreateReceiver("chaos");
        while (!stop.IsCancellationRequested)
        {
            try
            {
                var messages = await receiver.ReceiveMessagesAsync(random.Next(1, 6), TimeSpan.FromMilliseconds(100), stop);
                foreach (var message in messages)
                {
                    await SettleAsync(receiver, message, random.Next(10));
                }
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (ServiceBusException exception) when (exception.Reason is ServiceBusFailureReason.MessageLockLost || exception.IsTransient)
            {
                // The clock expired the lock or the link was detached: the message comes back (or was settled already).
            }
        }
    }

    private static Task SettleAsync(ServiceBusReceiver receiver, ServiceBusReceivedMessage message, int choice) => choice switch
    {
        < 6 => receiver.CompleteMessageAsync(message),
        < 8 => receiver.AbandonMessageAsync(message),
        8 => receiver.DeadLetterMessageAsync(message, "Chaos", "chosen by the seed"),
        _ => receiver.RenewMessageLockAsync(message), // held and renewed, then left to expire
    };
}
