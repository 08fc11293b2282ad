using System.Reflection;
using System.Runtime.CompilerServices;

namespace PriorityAsync.PublicApi.Tests;

/// <summary>
/// The shipped packages use only each other's public surface: a sibling needs nothing a third-party package could not
/// have, so no shipped assembly opens its internals to another (test assemblies aside).
/// </summary>
public sealed class PackageBoundaryTests
{
    [Theory]
    [MemberData(nameof(PublicApiTests.ShippedAssemblies), MemberType = typeof(PublicApiTests))]
    public void A_shipped_assembly_opens_its_internals_to_no_shipped_assembly(string assemblyName)
    {
        var friends = Assembly.Load(assemblyName).GetCustomAttributes<InternalsVisibleToAttribute>()
            .Select(a => a.AssemblyName.Split(',')[0].Trim())
            .ToList();

        friends.Should().NotBeEmpty("the test assemblies are friends, which shows the attributes are read");
        friends.Should().NotIntersectWith(PublicApiTests.ShippedAssemblyNames, $"{assemblyName} opens its internals only to test assemblies");
    }
}
