using System.Globalization;
using System.Text.RegularExpressions;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace PriorityAsync.MessagePump.Tests.Hosting;

/// <summary>The configuration keys table of docs/message-pump.md lists every option that configuration can set, and each binds.</summary>
public partial class ConfigurationKeysDocTests
{
    /// <summary>Set in code only: not bindable from configuration strings.</summary>
    private static readonly string[] CodeOnly = ["LeaseLane", "ProcessingLane", "ReceiveLane", "TimeProvider", "MeterFactory"];

    /// <summary>Options of the pump's keeper that the pump gives it (refused when set under <c>LeaseKeeper</c>).</summary>
    private static readonly string[] PumpGivesKeeper = ["Name", "LeaseLane", "TimeProvider", "MeterFactory"];

    [Fact]
    public void TheTable_ListsEveryBindableOption()
    {
        var pump = typeof(MessagePumpOptions).GetProperties().Where(p => p.CanWrite && p.PropertyType != typeof(LeaseKeeperOptions)).Select(p => p.Name);
        var keeper = typeof(LeaseKeeperOptions).GetProperties().Where(p => p.CanWrite).Select(p => p.Name).Except(PumpGivesKeeper).Select(name => $"LeaseKeeper:{name}");

        DocumentedKeys().Should().BeEquivalentTo(pump.Except(CodeOnly).Concat(keeper));
    }

    [Fact]
    public void EveryDocumentedKey_Binds()
    {
        var values = new Dictionary<string, string?>();
        foreach (var key in DocumentedKeys())
        {
            var property = Property(key).Property;
            var type = Nullable.GetUnderlyingType(property.PropertyType) ?? property.PropertyType;
            values[$"P:{key}"] = type == typeof(TimeSpan) ? "00:00:02.500" : type == typeof(int) ? "3" : type == typeof(bool) ? "False" : "bound";
        }

        var services = new ServiceCollection();
        services.AddSingleton<IConfiguration>(new ConfigurationBuilder().AddInMemoryCollection(values).Build());
        services.AddMessagePump("p", _ => new InMemoryTransport().CreateQueue("p")).BindConfiguration("P").WithHandler((_, _) => Task.CompletedTask);
        using var provider = services.BuildServiceProvider();
        var bound = provider.GetRequiredService<IOptionsMonitor<MessagePumpOptions>>().Get("p");

        foreach (var key in DocumentedKeys())
        {
            var (owner, property) = Property(key);
            var value = property.GetValue(owner(bound));
            Convert.ToString(value, CultureInfo.InvariantCulture).Should().Be(values[$"P:{key}"] == "00:00:02.500" ? "00:00:02.5000000" : values[$"P:{key}"], key);
        }
    }

    /// <summary>The property a key binds (<c>LeaseKeeper:Option</c> is an option of <see cref="MessagePumpOptions.LeaseKeeper"/>), and how to reach its owner.</summary>
    private static (Func<MessagePumpOptions, object> Owner, System.Reflection.PropertyInfo Property) Property(string key) =>
        key.StartsWith("LeaseKeeper:", StringComparison.Ordinal)
            ? (o => o.LeaseKeeper, typeof(LeaseKeeperOptions).GetProperty(key["LeaseKeeper:".Length..])!)
            : (o => o, typeof(MessagePumpOptions).GetProperty(key)!);

    private static List<string> DocumentedKeys()
    {
        var doc = File.ReadAllText(Path.Combine(RepositoryRoot.Find(), "docs", "message-pump.md")).Replace("\r\n", "\n");
        var section = doc[doc.IndexOf("### Configuration keys", StringComparison.Ordinal)..];
        section = section[..section.IndexOf("\n\n", section.IndexOf("| key |", StringComparison.Ordinal), StringComparison.Ordinal)];
        return [.. KeyRow().Matches(section).Select(m => m.Groups[1].Value)];
    }

    [GeneratedRegex(@"^\| `([\w:]+)` \|", RegexOptions.Multiline)]
    private static partial Regex KeyRow();
}
