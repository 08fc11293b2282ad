using System.Reflection;

namespace PriorityAsync.PublicApi.Tests;

/// <summary>
/// The public API baselines: each shipped assembly's surface (<see cref="PublicApiText"/>, by PublicApiGenerator) must equal its checked-in
/// <c>Snapshots/&lt;assembly&gt;.verified.txt</c>; a mismatch fails with a line diff and leaves
/// <c>Snapshots/&lt;assembly&gt;.received.txt</c> beside it (<see cref="ApprovedFile"/>).
/// </summary>
/// <remarks>
/// To accept an intended API change, either move the <c>.received.txt</c> files over the <c>.verified.txt</c> ones
/// after a failed run, or run the tests once with <c>PRIORITYASYNC_ACCEPT_API=1</c>:
/// <code>PRIORITYASYNC_ACCEPT_API=1 dotnet test tests/PublicApi.Tests -c Release</code>
/// then review the diff of <c>tests/PublicApi.Tests/Snapshots</c> and commit it.
/// </remarks>
public sealed class PublicApiTests
{
    /// <summary>The shipped assemblies, by name (each is also its package id and root namespace).</summary>
    internal static readonly string[] ShippedAssemblyNames =
    [
        "PriorityAsync",
        "PriorityAsync.MessagePump",
        "PriorityAsync.MessagePump.Hosting",
        "PriorityAsync.MessagePump.PostgreSql",
        "PriorityAsync.MessagePump.AzureServiceBus.Testing",
        "PriorityAsync.MessagePump.AzureServiceBus",
    ];

    /// <summary>The shipped assemblies, by name: one baseline file each.</summary>
    public static TheoryData<string> ShippedAssemblies() => new(ShippedAssemblyNames);

    [Theory]
    [MemberData(nameof(ShippedAssemblies))]
    public void Public_API_matches_the_checked_in_baseline(string assemblyName)
    {
        ApprovedFile.Verify(assemblyName, PublicApiText.Of(Assembly.Load(assemblyName)));
    }

    [Fact]
    public void The_snapshot_is_the_same_every_time()
    {
        var assembly = typeof(PriorityScheduler).Assembly;
        PublicApiText.Of(assembly).Should().Be(PublicApiText.Of(assembly));
    }

    [Fact]
    public void A_mismatch_shows_the_changed_lines()
    {
        ApprovedFile.LineDiff("a\nb\nc\n", "a\nB\nc\nd\n").Should().Be("-    2: b\n+    2: B\n+    4: d\n");
    }
}
