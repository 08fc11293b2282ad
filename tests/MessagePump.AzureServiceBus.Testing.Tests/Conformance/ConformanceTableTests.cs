using System.Reflection;
using System.Text.RegularExpressions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// Keeps the broker README's conformance table true: the number it gives for each group is the number of test methods
/// carrying <c>[Trait("Conformance", group)]</c> (on the method or its class) in this assembly, counted by reflection
/// (a theory counts once). A test added, moved or removed without the table changing fails here.
/// </summary>
public sealed partial class ConformanceTableTests
{
    private const string TraitName = "Conformance";

    [Fact]
    public void The_README_table_gives_the_number_of_conformance_tests_of_each_group()
    {
        var readme = File.ReadAllText(Path.Combine(RepositoryRoot.Find(), "src", "MessagePump.AzureServiceBus.Testing", "README.md"));

        var table = TableRow().Matches(readme).ToDictionary(m => m.Groups["group"].Value, m => int.Parse(m.Groups["count"].Value, System.Globalization.CultureInfo.InvariantCulture), StringComparer.Ordinal);
        var counted = typeof(ConformanceTableTests).Assembly.GetTypes()
            .SelectMany(type => type.GetMethods(BindingFlags.Public | BindingFlags.Instance | BindingFlags.DeclaredOnly))
            .Where(method => method.GetCustomAttributes<FactAttribute>().Any())
            .Select(GroupOf)
            .OfType<string>()
            .GroupBy(group => group, StringComparer.Ordinal)
            .ToDictionary(g => g.Key, g => g.Count(), StringComparer.Ordinal);

        table.Should().NotBeEmpty("the README has a conformance table (| claim group | `Trait` | count |)");
        table.Should().OnlyContain(row => row.Value > 0, "every group of claims has a test");
        table.Should().BeEquivalentTo(counted, "the README's table counts the [Trait(\"Conformance\", group)] tests");
    }

    private static string? GroupOf(MethodInfo method) =>
        TraitOf(method.GetCustomAttributesData()) ?? TraitOf(method.DeclaringType!.GetCustomAttributesData());

    private static string? TraitOf(IEnumerable<CustomAttributeData> attributes) =>
        attributes
            .Where(a => a.AttributeType == typeof(TraitAttribute) && Equals(a.ConstructorArguments[0].Value, TraitName))
            .Select(a => (string?)a.ConstructorArguments[1].Value)
            .FirstOrDefault();

    /// <summary>A row of the README's conformance table: <c>| what | `Group` | 12 |</c>.</summary>
    [GeneratedRegex(@"^\|[^|\n]+\|\s*`(?<group>[A-Za-z]+)`\s*\|\s*(?<count>\d+)\s*\|\s*$", RegexOptions.Multiline)]
    private static partial Regex TableRow();
}
