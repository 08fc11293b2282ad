using LeaseSimulation.Settings;

namespace LeaseSimulation.Tests.Scenario;

public sealed class SimulationSettingsTests
{
    [Fact]
    public void Validate_VirtualClockOnThreadPool_ThrowsNamingTheClock()
    {
        var settings = new SimulationSettings { Context = ContextKind.ThreadPool, Clock = ClockKind.Virtual };

        settings.Invoking(s => s.Validate()).Should().Throw<ArgumentException>().Which.ParamName.Should().Be(nameof(SimulationSettings.Clock));
    }

    [Fact]
    public void Validate_LeaseNotLongerThanRenewInterval_ThrowsNamingTheLease()
    {
        var settings = new SimulationSettings { RenewInterval = TimeSpan.FromSeconds(5), LeaseDuration = TimeSpan.FromSeconds(5) };

        settings.Invoking(s => s.Validate()).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be(nameof(SimulationSettings.LeaseDuration));
    }

    [Fact]
    public void CpuLimit_IsMessagesTimesLoopsTimesCpu()
    {
        new SimulationSettings { CpuTime = TimeSpan.FromSeconds(1) }.CpuLimit.Should().Be(TimeSpan.FromSeconds(2000));
    }
}
