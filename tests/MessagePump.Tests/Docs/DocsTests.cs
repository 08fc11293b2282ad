using PriorityAsync.QuickStarts;

namespace PriorityAsync.MessagePump.Tests.Docs;

public class DocsTests
{
    [Fact]
    public async Task QuickStart_Runs()
    {
        var stats = await QuickStartSample.RunAsync();

        stats.Should().BeEquivalentTo(new { Sent = 10, Completed = 10, InFlight = 0, LeasesLost = 0 });
    }

    [Fact]
    public async Task Tracing_Runs_AndTheProcessSpanJoinsTheProducersTrace()
    {
        var (producer, spans) = await TracingSample.RunAsync();

        spans.Should().Equal($"process invoices {producer} Unset");
    }

    [Theory]
    [InlineData("QuickStartSample.cs", "quick-start")]
    public void Sample_InTheDoc_IsTheCompiledSample(string file, string marker)
    {
        var root = RepositoryRoot.Find();
        var sample = File.ReadAllLines(Path.Combine(root, "tests", "QuickStart", file));
        var start = Array.FindIndex(sample, l => l.Trim() == $"// <{marker}>") + 1;
        var end = Array.FindIndex(sample, l => l.Trim() == $"// </{marker}>");
        start.Should().BePositive();
        var region = sample[start..end];
        var indent = region.Where(l => l.Trim().Length > 0).Min(l => l.Length - l.TrimStart().Length);
        var code = string.Join("\n", region.Select(l => l.Length >= indent ? l[indent..] : l.TrimStart()));

        var doc = File.ReadAllText(Path.Combine(root, "docs", "message-pump.md")).Replace("\r\n", "\n");

        doc.Should().Contain(code);
    }
}
