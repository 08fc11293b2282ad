namespace PriorityAsync.Tests.Support;

/// <summary>The tests' hang bound: 30 s unless the environment says otherwise, and a bad setting says what is wrong.</summary>
public class BoundedTests
{
    [Theory]
    [InlineData(null, 30)]
    [InlineData("", 30)]
    [InlineData("1", 1)]
    [InlineData("6", 6)]
    [InlineData("600", 600)]
    public void BoundFromEnvironment_ReadsWholeSeconds(string? setting, int seconds) =>
        Bounded.BoundFromEnvironment(setting).Should().Be(TimeSpan.FromSeconds(seconds));

    [Theory]
    [InlineData("0")]
    [InlineData("601")]
    [InlineData("-5")]
    [InlineData("2.5")]
    [InlineData("ten")]
    [InlineData("99999999999")]
    public void BoundFromEnvironment_RejectsAnythingElse_NamingTheVariableAndTheRule(string setting)
    {
        var read = () => Bounded.BoundFromEnvironment(setting);

        read.Should().Throw<InvalidOperationException>()
            .WithMessage($"{Bounded.BoundVariable} is '{setting}'; it must be a whole number of seconds from 1 to 600.");
    }
}
