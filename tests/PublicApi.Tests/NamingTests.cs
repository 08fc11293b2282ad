using System.Reflection;

namespace PriorityAsync.PublicApi.Tests;

/// <summary>
/// The naming rule of docs/design.md ("Names"): a shipped component's assembly, package and namespace are one name
/// (src/Directory.Build.targets checks the project side), and no public type is named like a namespace (the
/// Framework Design Guidelines, CA1724), which is why the pump class is <c>PriorityMessagePump</c>.
/// </summary>
public sealed class NamingTests
{
    /// <summary>Service-collection extensions live in this namespace by the .NET convention.</summary>
    private const string DependencyInjectionNamespace = "Microsoft.Extensions.DependencyInjection";

    [Theory]
    [MemberData(nameof(PublicApiTests.ShippedAssemblies), MemberType = typeof(PublicApiTests))]
    public void Every_public_type_is_in_the_namespace_named_like_its_assembly(string assemblyName)
    {
        var outside = Assembly.Load(assemblyName).GetExportedTypes()
            .Where(type => type.Namespace != DependencyInjectionNamespace)
            .Where(type => type.Namespace != assemblyName && !(type.Namespace ?? "").StartsWith(assemblyName + ".", StringComparison.Ordinal))
            .Select(type => type.FullName);

        outside.Should().BeEmpty();
    }

    [Fact]
    public void No_public_type_is_named_like_a_namespace()
    {
        var types = PublicApiTests.ShippedAssemblyNames.Select(Assembly.Load)
            .SelectMany(assembly => assembly.GetExportedTypes())
            .ToList();
        var segments = types.SelectMany(type => (type.Namespace ?? "").Split('.')).ToHashSet(StringComparer.Ordinal);

        types.Where(type => segments.Contains(type.Name)).Select(type => type.FullName).Should().BeEmpty();
    }
}
