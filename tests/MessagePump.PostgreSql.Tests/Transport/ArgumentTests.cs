using PriorityAsync.MessagePump.PostgreSql.Tests.Support;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Transport;

/// <summary>Bad input gets an exception that names the argument or the cause.</summary>
public class ArgumentTests
{
    [Theory]
    [InlineData("")]
    [InlineData("   ")]
    public void EmptyConnectionString_Throws_NamingIt(string connectionString)
    {
        var act = () => new PostgreSqlTransport(connectionString);
        act.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("connectionString");
    }

    [Theory]
    [InlineData("this is not a connection string")]
    [InlineData("Hots=127.0.0.1;Port=5432")]
    [InlineData("Host=127.0.0.1;Port=not-a-number")]
    [InlineData("Port=5432;Username=app")]
    public void MalformedConnectionString_Throws_NamingIt(string connectionString)
    {
        var act = () => new PostgreSqlTransport(connectionString);
        act.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("connectionString");
    }

    [Fact]
    public void NullConnectionString_Throws_NamingIt()
    {
        var act = () => new PostgreSqlTransport((string)null!);
        act.Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("connectionString");
    }

    [Theory]
    [InlineData("orders; DROP TABLE priorityasync.messages; --")]
    [InlineData("orders' OR '1'='1")]
    [InlineData("\"orders\"")]
    [InlineData("Orders")]
    [InlineData("9orders")]
    [InlineData("orders-eu")]
    [InlineData("")]
    [InlineData("a_name_that_is_much_longer_than_forty_eight_characters")]
    public async Task QueueNameWithSqlOrOutsideTheRule_IsRejected_BeforeAnyStatement(string name)
    {
        // A connection string whose server does not exist: the name must be rejected before anything is sent.
        await using var transport = new PostgreSqlTransport("Host=127.0.0.1;Port=1;Timeout=1");
        (await FluentActions.Awaiting(() => transport.CreateQueueAsync(name)).Should().ThrowAsync<ArgumentException>()).Which.ParamName.Should().Be("name");
        (await FluentActions.Awaiting(() => transport.GetQueueAsync(name)).Should().ThrowAsync<ArgumentException>()).Which.ParamName.Should().Be("name");
        (await FluentActions.Awaiting(() => transport.DeleteQueueAsync(name)).Should().ThrowAsync<ArgumentException>()).Which.ParamName.Should().Be("name");
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    public async Task LockDurationNotPositive_Throws_NamingIt(int milliseconds)
    {
        await using var transport = new PostgreSqlTransport("Host=127.0.0.1;Port=1;Timeout=1");
        var act = () => transport.CreateQueueAsync("orders", new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromMilliseconds(milliseconds) });
        (await act.Should().ThrowAsync<ArgumentOutOfRangeException>()).Which.ParamName.Should().Be("LockDuration");
    }

    [Fact]
    public async Task MaxDeliveryCountBelowOne_Throws_NamingIt()
    {
        await using var transport = new PostgreSqlTransport("Host=127.0.0.1;Port=1;Timeout=1");
        var act = () => transport.CreateQueueAsync("orders", new PostgreSqlQueueOptions { MaxDeliveryCount = 0 });
        (await act.Should().ThrowAsync<ArgumentOutOfRangeException>()).Which.ParamName.Should().Be("MaxDeliveryCount");
    }

    [Fact]
    public void TransportOptionsOutOfRange_Throw_NamingThem()
    {
        FluentActions.Invoking(() => new PostgreSqlTransport("Host=127.0.0.1", new PostgreSqlTransportOptions { PollInterval = TimeSpan.Zero }))
            .Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("PollInterval");
        FluentActions.Invoking(() => new PostgreSqlTransport("Host=127.0.0.1", new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.FromSeconds(-1) }))
            .Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("ReceiveWaitTime");
    }

    [Fact]
    public async Task ServerNotListening_IsTransient()
    {
        await using var transport = new PostgreSqlTransport("Host=127.0.0.1;Port=1;Timeout=2;Username=x;Password=y");
        var act = () => transport.MigrateAsync();
        (await act.Should().ThrowAsync<TransientTransportException>()).WithMessage("*failed transiently*");
    }

    [PostgresFact]
    public async Task UnknownQueue_Throws_NamingTheQueue()
    {
        await using var transport = PostgresServer.CreateTransport();
        await transport.MigrateAsync();
        var name = PostgresServer.UniqueName("missing");
        var thrown = await FluentActions.Awaiting(() => transport.GetQueueAsync(name)).Should().ThrowAsync<ArgumentException>();
        thrown.Which.ParamName.Should().Be("name");
        thrown.Which.Message.Should().Contain(name).And.Contain("no queue");
    }

    [PostgresFact]
    public async Task SqlInAQueueName_NeverReachesTheDatabase_AndTheTablesSurvive()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("safe"));
        await queue.SendAsync(new byte[] { 1 });
        await FluentActions.Awaiting(() => transport.CreateQueueAsync("x; DROP TABLE priorityasync.messages; --")).Should().ThrowAsync<ArgumentException>();
        (await queue.GetStatisticsAsync()).Visible.Should().Be(1);
    }
}
