
namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

public sealed class ValidationTests
{
    [Fact]
    public async Task Entity_options_out_of_range_are_refused_naming_the_argument()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();

        FluentActions.Invoking(() => broker.CreateQueue("q", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.Zero }))
            .Should().Throw<ArgumentOutOfRangeException>().Which.Message.Should().Contain("LockDuration");
        FluentActions.Invoking(() => broker.CreateQueue("q", new ServiceBusTestEntityOptions { MaxDeliveryCount = 0 }))
            .Should().Throw<ArgumentOutOfRangeException>().Which.Message.Should().Contain("MaxDeliveryCount");
        FluentActions.Invoking(() => broker.CreateQueue(" ")).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("name");
        FluentActions.Invoking(() => broker.CreateQueue("a/$b")).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("name");
    }

    [Fact]
    public async Task Names_are_unique_and_unknown_paths_are_refused()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        broker.CreateQueue("taken");

        FluentActions.Invoking(() => broker.CreateQueue("TAKEN")).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("name");
        FluentActions.Invoking(() => broker.CreateTopic("taken")).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("name");
        FluentActions.Invoking(() => broker.GetQueue("missing")).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("path");
        broker.GetQueue("taken/$DeadLetterQueue").Should().BeSameAs(broker.GetQueue("taken").DeadLetterQueue);
        FluentActions.Invoking(() => broker.GetQueue("taken/$DeadLetterQueue").Send("x"u8.ToArray())).Should().Throw<InvalidOperationException>();
    }

    [Fact]
    public async Task Broker_options_and_faults_are_validated()
    {
        await FluentActions.Awaiting(() => ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions { Port = 70000 }))
            .Should().ThrowAsync<ArgumentOutOfRangeException>();
        (await FluentActions.Awaiting(() => ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions { MaxMessageSizeInBytes = ServiceBusTestBrokerOptions.PremiumMaxMessageSizeInBytes + 1 }))
            .Should().ThrowAsync<ArgumentOutOfRangeException>()).Which.Message.Should().Contain("MaxMessageSizeInBytes");
        await FluentActions.Awaiting(() => ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions { MaxMessageSizeInBytes = 0 }))
            .Should().ThrowAsync<ArgumentOutOfRangeException>();
        await FluentActions.Awaiting(() => ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions { TimeProvider = null! }))
            .Should().ThrowAsync<ArgumentNullException>();
        await using var broker = await ServiceBusTestBroker.StartAsync();

        FluentActions.Invoking(() => broker.Faults.FailNextRenewals(0, ServiceBusTestFault.LockLost)).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("count");
        FluentActions.Invoking(() => broker.Faults.FailNextReceives(1, (ServiceBusTestFault)42)).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("fault");
        FluentActions.Invoking(() => broker.Faults.RenewLockDelay = TimeSpan.FromSeconds(-1)).Should().Throw<ArgumentOutOfRangeException>();
        FluentActions.Invoking(() => broker.Faults.FailNext(ServiceBusTestOperations.Send, -1, ServiceBusTestFault.Timeout)).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("count");
        FluentActions.Invoking(() => broker.Faults.FailNext(ServiceBusTestOperations.None, 1, ServiceBusTestFault.Timeout)).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("operations");
        FluentActions.Invoking(() => broker.Faults.FailNext((ServiceBusTestOperations)4096, 1, ServiceBusTestFault.Timeout)).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("operations");
        FluentActions.Invoking(() => broker.Faults.FailNext(ServiceBusTestOperations.Complete, 1, (ServiceBusTestFault)42)).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("fault");
        FluentActions.Invoking(() => broker.Faults.FailNext(ServiceBusTestOperations.Send | ServiceBusTestOperations.Renewals, 1, ServiceBusTestFault.LockLost)).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("fault");
    }

    [Fact]
    public async Task The_connection_string_names_the_loopback_port_and_the_emulator_flag()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions { KeyName = "name", Key = "a2V5" });

        broker.Port.Should().BePositive();
        broker.ConnectionString.Should().Be($"Endpoint=sb://127.0.0.1:{broker.Port};SharedAccessKeyName=name;SharedAccessKey=a2V5;UseDevelopmentEmulator=true");
        broker.IsListening.Should().BeTrue();
        await broker.StopAsync();
        broker.IsListening.Should().BeFalse();
    }

    [Fact]
    public async Task DefaultMessageTimeToLive_must_be_positive()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();

        FluentActions.Invoking(() => broker.CreateQueue("q", new ServiceBusTestEntityOptions { DefaultMessageTimeToLive = TimeSpan.Zero }))
            .Should().Throw<ArgumentOutOfRangeException>().Which.Message.Should().Contain("DefaultMessageTimeToLive");
    }
}
