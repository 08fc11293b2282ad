using System.Reflection;
using System.Text.RegularExpressions;

namespace PriorityAsync.PublicApi.Tests;

/// <summary>
/// Every type a shipped assembly exports is declared in its checked-in baseline: a generator option that skips a
/// namespace (PublicApiGenerator skips <c>Microsoft.*</c> by default, where the service-collection extensions live)
/// cannot leave a public type out of review unnoticed. Compared by reflection, not by the generator.
/// </summary>
public sealed partial class BaselineCoverageTests
{
    [Theory]
    [MemberData(nameof(PublicApiTests.ShippedAssemblies), MemberType = typeof(PublicApiTests))]
    public void Every_exported_type_is_declared_in_the_baseline(string assemblyName)
    {
        var path = Path.Combine(RepositoryRoot.Find(), "tests", "PublicApi.Tests", "Snapshots", assemblyName + ".verified.txt");
        var declared = DeclaredTypes(File.ReadAllText(path));

        var missing = Assembly.Load(assemblyName).GetExportedTypes()
            .Select(type => (type.Namespace ?? string.Empty, SimpleName(type)))
            .Where(type => !declared.Contains(type))
            .Select(type => $"{type.Item1}.{type.Item2}");

        missing.Should().BeEmpty("every exported type of {0} must be in its baseline", assemblyName);
    }

    [Fact]
    public void A_type_missing_from_the_text_is_not_declared()
    {
        const string text = "namespace A.B\n{\n    public static class Present\n    {\n        public sealed class Nested<T> { }\n    }\n    public delegate void Handler(int x);\n}\n";

        DeclaredTypes(text).Should().BeEquivalentTo(new[] { ("A.B", "Present"), ("A.B", "Nested"), ("A.B", "Handler") });
    }

    /// <summary>The (namespace, simple name) of every type declared in a baseline text, nested types included.</summary>
    internal static HashSet<(string Namespace, string Name)> DeclaredTypes(string baseline)
    {
        var declared = new HashSet<(string, string)>();
        var currentNamespace = string.Empty;
        foreach (var line in baseline.Split('\n'))
        {
            if (NamespaceLine().Match(line) is { Success: true } ns)
            {
                currentNamespace = ns.Groups["name"].Value;
            }
            else if (TypeLine().Match(line) is { Success: true } type)
            {
                declared.Add((currentNamespace, type.Groups["name"].Value));
            }
        }

        return declared;
    }

    /// <summary>The type's name as C# declares it: without the generic arity suffix.</summary>
    private static string SimpleName(Type type)
    {
        var tick = type.Name.IndexOf('`', StringComparison.Ordinal);
        return tick < 0 ? type.Name : type.Name[..tick];
    }

    [GeneratedRegex(@"^namespace (?<name>[\w.]+)\s*$")]
    private static partial Regex NamespaceLine();

    [GeneratedRegex(@"^\s*public\b[^(=]*?\b(?:class|struct|interface|enum|record(?: struct| class)?)\s+(?<name>\w+)|^\s*public\b[^(=]*?\bdelegate\s+\S+\s+(?<name>\w+)\s*[<(]")]
    private static partial Regex TypeLine();
}
