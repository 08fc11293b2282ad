using Contract = PriorityAsync.MessagePump.Tests.Docs.Contract;

namespace PriorityAsync.MessagePump.Tests.Docs;

/// <summary>
/// The transport block of docs/message-pump.md is an excerpt of <c>TransportContract.cs</c> (checked by tests/DocsCompile);
/// this test checks that the copy declares exactly the real interfaces' members, with the same types and parameters.
/// </summary>
public class TransportContractTests
{
    [Theory]
    [InlineData(typeof(Contract.IMessageSource), typeof(IMessageSource))]
    [InlineData(typeof(Contract.ILeasedMessage), typeof(ILeasedMessage))]
    [InlineData(typeof(Contract.ISettleableMessage), typeof(ISettleableMessage))]
    [InlineData(typeof(Contract.ISettlementOwner), typeof(ISettlementOwner))]
    public void ThePagesInterface_HasTheRealInterfacesMembers(Type page, Type real)
    {
        Signatures(page).Should().BeEquivalentTo(Signatures(real), $"docs/message-pump.md shows {real.Name} as it is");
    }

    private static List<string> Signatures(Type type)
    {
        var members = new List<string>();
        foreach (var property in type.GetProperties())
        {
            members.Add($"{Name(property.PropertyType)} {property.Name}");
        }

        foreach (var method in type.GetMethods().Where(m => !m.IsSpecialName))
        {
            var parameters = method.GetParameters().Select(p => $"{Name(p.ParameterType)} {p.Name}{(p.HasDefaultValue ? " = default" : string.Empty)}");
            members.Add($"{Name(method.ReturnType)} {method.Name}({string.Join(", ", parameters)})");
        }

        return members;
    }

    /// <summary>A type's name with its generic arguments, without namespaces, and with nullable value types spelled as such.</summary>
    private static string Name(Type type)
    {
        if (Nullable.GetUnderlyingType(type) is { } underlying)
        {
            return Name(underlying) + "?";
        }

        if (!type.IsGenericType)
        {
            return type.Name;
        }

        var name = type.Name[..type.Name.IndexOf('`', StringComparison.Ordinal)];
        return $"{name}<{string.Join(", ", type.GetGenericArguments().Select(Name))}>";
    }
}
