using PriorityAsync.Tests.Shared;

namespace PriorityAsync.Messaging.Tests.Docs;

public class DocsTests
{
    [Fact]
    public async Task QuickStart_Runs()
    {
        var stats = await QuickStartSample.RunAsync();

        stats.Should().BeEquivalentTo(new { Sent = 10, Completed = 10, InFlight = 0, LeasesLost = 0 });
    }

    [Fact]
    public void QuickStart_InTheDoc_IsTheCompiledSample()
    {
        var root = RepositoryRoot.Find();
        var sample = File.ReadAllLines(Path.Combine(root, "tests", "MessagePump.Tests", "Docs", "QuickStartSample.cs"));
        var start = Array.FindIndex(sample, l => l.Trim() == "// <quick-start>") + 1;
        var end = Array.FindIndex(sample, l => l.Trim() == "// </quick-start>");
        var region = sample[start..end];
        var indent = region.Where(l => l.Trim().Length > 0).Min(l => l.Length - l.TrimStart().Length);
        var code = string.Join("\n", region.Select(l => l.Length >= indent ? l[indent..] : l.TrimStart()));

        var doc = File.ReadAllText(Path.Combine(root, "docs", "message-pump.md")).Replace("\r\n", "\n");

        doc.Should().Contain(code);
    }
}
