using System.Reflection;
using PublicApiGenerator;

namespace PriorityAsync.PublicApi.Tests;

/// <summary>
/// An assembly's public surface as C# text, by PublicApiGenerator: every type a user can name and every member a user
/// can call or override, with nullability, in a fixed order, so a diff of two texts shows exactly what changed.
/// </summary>
internal static class PublicApiText
{
    /// <summary>
    /// Assembly-level attributes are left out: they list build details (target framework, internals visible to the
    /// test projects) that a user of the package cannot call, and would turn every test-project rename into an API change.
    /// No namespace is denied: PublicApiGenerator skips <c>System.*</c> and <c>Microsoft.*</c> by default, which left the
    /// service-collection extensions (<c>AddMessagePump</c>, <c>AddPriorityScheduler</c>, <c>AddServiceBusMessagePump</c>),
    /// declared in <c>Microsoft.Extensions.DependencyInjection</c> by the .NET convention, out of every baseline.
    /// <c>DebuggerDisplay</c> is left out: what a debugger shows is no contract, and it names private fields.
    /// </summary>
    private static readonly ApiGeneratorOptions Options = new()
    {
        IncludeAssemblyAttributes = false,
        DenyNamespacePrefixes = [],
        ExcludeAttributes = ["System.Diagnostics.DebuggerDisplayAttribute"],
    };

    /// <summary>The public API text of <paramref name="assembly"/>.</summary>
    public static string Of(Assembly assembly) => assembly.GeneratePublicApi(Options);
}
