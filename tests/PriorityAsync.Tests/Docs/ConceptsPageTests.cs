namespace PriorityAsync.Tests.Docs;

public class ConceptsPageTests
{
    [Theory]
    [InlineData("single-thread")]
    [InlineData("multi-thread")]
    [InlineData("custom-lanes")]
    [InlineData("stopping")]
    [InlineData("hosted")]
    public void EveryExampleOfTheConceptsPage_IsTheCompiledExample(string region)
    {
        var root = RepositoryRoot.Find();
        var source = File.ReadAllLines(Path.Combine(root, "tests", "PriorityAsync.Tests", "Docs", "ConceptsExamples.cs"));
        var start = Array.FindIndex(source, l => l.Trim() == $"// <{region}>") + 1;
        var end = Array.FindIndex(source, l => l.Trim() == $"// </{region}>");
        start.Should().BePositive();
        end.Should().BeGreaterThan(start);
        var lines = source[start..end].Reverse().SkipWhile(l => l.Trim().Length == 0).Reverse().ToArray();
        var indent = lines.Where(l => l.Trim().Length > 0).Min(l => l.Length - l.TrimStart().Length);
        var code = string.Join("\n", lines.Select(l => l.Length >= indent ? l[indent..] : l.TrimStart()));

        var page = File.ReadAllText(Path.Combine(root, "docs", "concepts.md")).Replace("\r\n", "\n");

        page.Should().Contain($"<!-- excerpt: tests/PriorityAsync.Tests/Docs/ConceptsExamples.cs -->\n```csharp\n{code}\n```");
    }
}
