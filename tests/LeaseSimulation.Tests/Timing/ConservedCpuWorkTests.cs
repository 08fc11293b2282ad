using System.Diagnostics;
using LeaseSimulation.Timing;

namespace LeaseSimulation.Tests.Timing;

/// <summary>The <c>work</c> CPU mode counts the thread's own CPU time, not wall time.</summary>
public sealed class ConservedCpuWorkTests
{
    [Fact]
    public void Run_StopsWhenTheThreadCpuTimeHasAdvancedByTheWork_HoweverLongTheWallTime()
    {
        // A fake thread that gets the CPU for 1 ms in every 3 ms of wall time (descheduled by two others).
        var wall = TimeSpan.Zero;
        var cpu = TimeSpan.Zero;
        void Burn()
        {
            wall += TimeSpan.FromMilliseconds(3);
            cpu += TimeSpan.FromMilliseconds(1);
        }

        var used = ConservedCpuWork.Run(TimeSpan.FromMilliseconds(100), () => cpu, Burn);

        used.Should().Be(TimeSpan.FromMilliseconds(100));
        wall.Should().Be(TimeSpan.FromMilliseconds(300), "the work is conserved: a third of the CPU takes three times as long");
    }

    [Fact]
    public void Run_CountsFromTheFirstRead_AndRoundsUpToTheNextSlice()
    {
        var cpu = TimeSpan.FromSeconds(50); // the thread has run before
        var slices = 0;

        var used = ConservedCpuWork.Run(TimeSpan.FromMilliseconds(10), () => cpu, () =>
        {
            slices++;
            cpu += TimeSpan.FromMilliseconds(4);
        });

        used.Should().Be(TimeSpan.FromMilliseconds(12));
        slices.Should().Be(3);
    }

    [Fact]
    public void Run_WithNoWork_DoesNotBurn()
    {
        var slices = 0;

        ConservedCpuWork.Run(TimeSpan.Zero, () => TimeSpan.Zero, () => slices++).Should().Be(TimeSpan.Zero);
        slices.Should().Be(0);
    }

    [Fact]
    public void ThreadCpuTime_IsSupportedOnLinux_AndAdvancesWithComputation()
    {
        if (!OperatingSystem.IsLinux())
        {
            ThreadCpuTime.IsSupported.Should().Be(OperatingSystem.IsMacOS(), "only libc's clock_gettime is used");
            return;
        }

        ThreadCpuTime.IsSupported.Should().BeTrue();
        var before = ThreadCpuTime.Now();
        var wall = Stopwatch.StartNew();
        while (wall.ElapsedMilliseconds < 50)
        {
            Thread.SpinWait(64);
        }

        var used = ThreadCpuTime.Now() - before;
        used.Should().BePositive();
        used.Should().BeLessThanOrEqualTo(wall.Elapsed + TimeSpan.FromMilliseconds(20), "a thread cannot use more CPU than wall time");
    }

    [Fact]
    public void ConservedWork_OnSaturatedCores_TakesLongerInWallTimeThanTheWork()
    {
        if (!ThreadCpuTime.IsSupported)
        {
            return;
        }

        // Twice as many threads as cores, each doing 200 ms of CPU work: together they need at least
        // 2 × 200 ms of wall time on any machine, because the cores cannot do more than that much CPU work.
        var work = TimeSpan.FromMilliseconds(200);
        var threadCount = 2 * Environment.ProcessorCount;
        var wallTimes = new TimeSpan[threadCount];
        using var start = new ManualResetEventSlim();
        var threads = Enumerable.Range(0, threadCount).Select(i => new Thread(() =>
        {
            start.Wait();
            var wall = Stopwatch.StartNew();
            ConservedCpuWork.Run(work, ThreadCpuTime.Now);
            wallTimes[i] = wall.Elapsed;
        })).ToList();
        threads.ForEach(t => t.Start());
        var total = Stopwatch.StartNew();
        start.Set();
        threads.ForEach(t => t.Join());
        total.Stop();

        total.Elapsed.Should().BeGreaterThanOrEqualTo(work * 1.5, "2 × cores × 200 ms of CPU work cannot fit in less than 400 ms on those cores");
        wallTimes.Max().Should().BeGreaterThan(work * 1.5, "the last thread to finish was descheduled for about half the time");
        wallTimes.Should().OnlyContain(t => t >= work * 0.95, "no thread does its work in less wall time than the work");
    }
}
