using System.Globalization;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Text;

namespace PriorityAsync.PublicApi.Tests;

/// <summary>
/// Renders an assembly's public surface as sorted, C#-like text, one line per type and per member: every type a user
/// can name (public, or nested public in one), and every member a user can call or override (public, protected,
/// protected internal), with nullability annotations (except on type parameters, see <see cref="TypeName"/>). The order is fixed (ordinal, by namespace, type and member), so
/// the same assembly always gives the same text and a diff shows exactly what changed.
/// </summary>
internal static class PublicApiSnapshot
{
    private const BindingFlags DeclaredMembers =
        BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;

    private static readonly Dictionary<Type, string> Keywords = new()
    {
        [typeof(void)] = "void", [typeof(object)] = "object", [typeof(string)] = "string", [typeof(bool)] = "bool",
        [typeof(byte)] = "byte", [typeof(sbyte)] = "sbyte", [typeof(char)] = "char", [typeof(short)] = "short",
        [typeof(ushort)] = "ushort", [typeof(int)] = "int", [typeof(uint)] = "uint", [typeof(long)] = "long",
        [typeof(ulong)] = "ulong", [typeof(float)] = "float", [typeof(double)] = "double", [typeof(decimal)] = "decimal",
        [typeof(nint)] = "nint", [typeof(nuint)] = "nuint",
    };

    /// <summary>The snapshot text of <paramref name="assembly"/>'s public surface.</summary>
    public static string Generate(Assembly assembly)
    {
        var nullability = new NullabilityInfoContext();
        var text = new StringBuilder();
        var types = assembly.GetExportedTypes().OrderBy(t => t.FullName, StringComparer.Ordinal);
        foreach (var group in types.GroupBy(t => t.Namespace ?? string.Empty))
        {
            text.Append("namespace ").Append(group.Key).Append('\n');
            foreach (var type in group)
            {
                text.Append("  ").Append(TypeDeclaration(type, nullability)).Append('\n');
                var members = Members(type, nullability)
                    .OrderBy(m => m.Kind)
                    .ThenBy(m => m.Name, StringComparer.Ordinal)
                    .ThenBy(m => m.Line, StringComparer.Ordinal);
                foreach (var member in members)
                {
                    text.Append("    ").Append(member.Line).Append('\n');
                }
            }
        }

        return text.ToString();
    }

    private static string TypeDeclaration(Type type, NullabilityInfoContext nullability)
    {
        var name = TypeName(type, null, declaration: true);
        if (typeof(Delegate).IsAssignableFrom(type.BaseType) && type.BaseType != typeof(Delegate))
        {
            var invoke = type.GetMethod("Invoke")!;
            return $"public delegate {TypeName(invoke.ReturnType, nullability.Create(invoke.ReturnParameter))} {name}"
                + $"({Parameters(invoke, nullability)}){Constraints(type.GetGenericArguments())}";
        }

        string kind;
        if (type.IsInterface)
        {
            kind = "interface";
        }
        else if (type.IsEnum)
        {
            kind = "enum";
        }
        else if (type.IsValueType)
        {
            kind = type.IsDefined(typeof(IsReadOnlyAttribute), false) ? "readonly struct" : "struct";
        }
        else
        {
            kind = type.IsAbstract && type.IsSealed ? "static class"
                : type.IsAbstract ? "abstract class"
                : type.IsSealed ? "sealed class"
                : "class";
        }

        if (type.GetMethod("<Clone>$") is not null)
        {
            kind = kind.Replace("class", "record", StringComparison.Ordinal);
        }

        var bases = new List<string>();
        if (type.IsEnum)
        {
            bases.Add(TypeName(Enum.GetUnderlyingType(type), null));
        }
        else
        {
            if (type.BaseType is { } baseType && baseType != typeof(object) && baseType != typeof(ValueType))
            {
                bases.Add(TypeName(baseType, null));
            }

            var inherited = type.BaseType?.GetInterfaces() ?? [];
            bases.AddRange(type.GetInterfaces()
                .Where(i => i.IsVisible && !inherited.Contains(i))
                .Select(i => TypeName(i, null))
                .Order(StringComparer.Ordinal));
        }

        var declaration = $"public {kind} {name}";
        if (bases.Count > 0)
        {
            declaration += " : " + string.Join(", ", bases);
        }

        return declaration + Constraints(type.GetGenericArguments());
    }

    /// <summary>The order of member kinds in a type's listing; within a kind, members sort by name, then by signature.</summary>
    private enum MemberKind
    {
        Field,
        Constructor,
        Property,
        Event,
        Method,
    }

    private static IEnumerable<(MemberKind Kind, string Name, string Line)> Members(Type type, NullabilityInfoContext nullability)
    {
        if (type.IsEnum)
        {
            foreach (var field in type.GetFields(BindingFlags.Public | BindingFlags.Static))
            {
                var value = Convert.ToString(field.GetRawConstantValue(), CultureInfo.InvariantCulture);
                yield return (MemberKind.Field, string.Empty, $"{field.Name} = {value}");
            }

            yield break;
        }

        if (typeof(Delegate).IsAssignableFrom(type.BaseType) && type.BaseType != typeof(Delegate))
        {
            yield break;
        }

        foreach (var member in type.GetMembers(DeclaredMembers))
        {
            if (member.Name.Contains('<', StringComparison.Ordinal) || member is Type)
            {
                continue; // compiler-generated members; nested types are listed on their own
            }

            var kind = member switch
            {
                ConstructorInfo => MemberKind.Constructor,
                PropertyInfo => MemberKind.Property,
                EventInfo => MemberKind.Event,
                FieldInfo => MemberKind.Field,
                _ => MemberKind.Method,
            };
            var line = member switch
            {
                ConstructorInfo constructor when Visible(constructor) =>
                    $"{Access(constructor)}{(constructor.IsStatic ? "static " : string.Empty)}{SimpleName(type)}({Parameters(constructor, nullability)})",
                MethodInfo method when Visible(method) && (!method.IsSpecialName || method.Name.StartsWith("op_", StringComparison.Ordinal)) =>
                    Method(type, method, nullability),
                PropertyInfo property when Accessors(property).Any(Visible) => Property(type, property, nullability),
                EventInfo @event when @event.AddMethod is { } add && Visible(add) =>
                    $"{Access(add)}{Modifiers(type, add)}event {TypeName(@event.EventHandlerType!, nullability.Create(@event))} {@event.Name}",
                FieldInfo field when Visible(field) => Field(field, nullability),
                _ => null,
            };
            if (line is not null)
            {
                yield return (kind, member.Name, line);
            }
        }
    }

    private static string SimpleName(Type type) =>
        type.Name.IndexOf('`', StringComparison.Ordinal) is var tick and >= 0 ? type.Name[..tick] : type.Name;

    private static string Method(Type type, MethodInfo method, NullabilityInfoContext nullability)
    {
        var returnType = TypeName(method.ReturnType, nullability.Create(method.ReturnParameter));
        var generic = method.IsGenericMethodDefinition
            ? "<" + string.Join(", ", method.GetGenericArguments().Select(a => a.Name)) + ">"
            : string.Empty;
        return $"{Access(method)}{Modifiers(type, method)}{returnType} {method.Name}{generic}({Parameters(method, nullability)})"
            + Constraints(method.IsGenericMethodDefinition ? method.GetGenericArguments() : []);
    }

    private static string Property(Type type, PropertyInfo property, NullabilityInfoContext nullability)
    {
        var main = Accessors(property).Where(Visible).OrderBy(a => a.IsPublic ? 0 : 1).First();
        var access = Access(main);
        var accessors = new List<string>();
        if (property.GetMethod is { } get && Visible(get))
        {
            accessors.Add(AccessorAccess(access, get) + "get;");
        }

        if (property.SetMethod is { } set && Visible(set))
        {
            var init = set.ReturnParameter.GetRequiredCustomModifiers().Contains(typeof(IsExternalInit));
            accessors.Add(AccessorAccess(access, set) + (init ? "init;" : "set;"));
        }

        var required = property.IsDefined(typeof(RequiredMemberAttribute), false) ? "required " : string.Empty;
        var indexParameters = property.GetIndexParameters();
        var name = indexParameters.Length == 0
            ? property.Name
            : $"this[{string.Join(", ", indexParameters.Select(p => Parameter(p, nullability)))}]";
        return $"{access}{Modifiers(type, main)}{required}{TypeName(property.PropertyType, nullability.Create(property))} {name} {{ {string.Join(" ", accessors)} }}";
    }

    private static string Field(FieldInfo field, NullabilityInfoContext nullability)
    {
        var type = TypeName(field.FieldType, nullability.Create(field));
        if (field.IsLiteral)
        {
            return $"{Access(field)}const {type} {field.Name} = {Literal(field.GetRawConstantValue(), field.FieldType)}";
        }

        var modifiers = (field.IsStatic ? "static " : string.Empty) + (field.IsInitOnly ? "readonly " : string.Empty);
        return $"{Access(field)}{modifiers}{type} {field.Name}";
    }

    private static IEnumerable<MethodInfo> Accessors(PropertyInfo property) =>
        new[] { property.GetMethod, property.SetMethod }.OfType<MethodInfo>();

    private static bool Visible(MethodBase method) => method.IsPublic || method.IsFamily || method.IsFamilyOrAssembly;

    private static bool Visible(FieldInfo field) => field.IsPublic || field.IsFamily || field.IsFamilyOrAssembly;

    private static string Access(MethodBase method) => method.IsPublic ? "public " : "protected ";

    private static string Access(FieldInfo field) => field.IsPublic ? "public " : "protected ";

    private static string AccessorAccess(string propertyAccess, MethodInfo accessor) =>
        Access(accessor) == propertyAccess ? string.Empty : Access(accessor);

    private static string Modifiers(Type type, MethodInfo method)
    {
        if (type.IsInterface)
        {
            return method.IsStatic ? (method.IsAbstract ? "static abstract " : "static ") : string.Empty;
        }

        if (method.IsStatic)
        {
            return "static ";
        }

        if (!method.IsVirtual)
        {
            return string.Empty;
        }

        var isOverride = method.GetBaseDefinition() != method;
        if (method.IsFinal)
        {
            return isOverride ? "sealed override " : string.Empty; // final and not an override: an interface method
        }

        return isOverride ? (method.IsAbstract ? "abstract override " : "override ")
            : method.IsAbstract ? "abstract "
            : "virtual ";
    }

    private static string Parameters(MethodBase method, NullabilityInfoContext nullability)
    {
        var extension = method.IsDefined(typeof(ExtensionAttribute), false);
        return string.Join(", ", method.GetParameters().Select((p, i) => (extension && i == 0 ? "this " : string.Empty) + Parameter(p, nullability)));
    }

    private static string Parameter(ParameterInfo parameter, NullabilityInfoContext nullability)
    {
        var modifier = parameter.ParameterType.IsByRef
            ? parameter.IsOut ? "out " : parameter.IsIn ? "in " : "ref "
            : parameter.IsDefined(typeof(ParamArrayAttribute), false) ? "params " : string.Empty;
        var text = $"{modifier}{TypeName(parameter.ParameterType, nullability.Create(parameter))} {parameter.Name}";
        if (parameter.HasDefaultValue)
        {
            text += " = " + Literal(parameter.RawDefaultValue, parameter.ParameterType);
        }

        return text;
    }

    private static string Literal(object? value, Type type)
    {
        var underlying = Nullable.GetUnderlyingType(type) ?? type;
        return value switch
        {
            null => underlying.IsValueType ? "default" : "null",
            string s => "\"" + s.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("\"", "\\\"", StringComparison.Ordinal) + "\"",
            bool b => b ? "true" : "false",
            char c => $"'{c}'",
            _ when underlying.IsEnum => $"{TypeName(underlying, null)}.{Enum.ToObject(underlying, value)}",
            IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
            _ => value.ToString() ?? string.Empty,
        };
    }

    private static string Constraints(Type[] genericArguments)
    {
        var clauses = new StringBuilder();
        foreach (var argument in genericArguments.Where(a => a.IsGenericParameter))
        {
            var constraints = new List<string>();
            var attributes = argument.GenericParameterAttributes;
            if (attributes.HasFlag(GenericParameterAttributes.NotNullableValueTypeConstraint))
            {
                constraints.Add("struct");
            }
            else if (attributes.HasFlag(GenericParameterAttributes.ReferenceTypeConstraint))
            {
                constraints.Add("class");
            }

            constraints.AddRange(argument.GetGenericParameterConstraints()
                .Where(c => c != typeof(ValueType))
                .Select(c => TypeName(c, null))
                .Order(StringComparer.Ordinal));
            if (attributes.HasFlag(GenericParameterAttributes.DefaultConstructorConstraint)
                && !attributes.HasFlag(GenericParameterAttributes.NotNullableValueTypeConstraint))
            {
                constraints.Add("new()");
            }

            if (constraints.Count > 0)
            {
                clauses.Append(" where ").Append(argument.Name).Append(" : ").Append(string.Join(", ", constraints));
            }
        }

        return clauses.ToString();
    }

    /// <summary>
    /// A type as C# spells it: keywords, namespace-qualified names, generic arguments, arrays, <c>T?</c> for
    /// nullable value types and, where <paramref name="nullability"/> says so, nullable references.
    /// </summary>
    private static string TypeName(Type type, NullabilityInfo? nullability, bool declaration = false)
    {
        if (type.IsByRef)
        {
            type = type.GetElementType()!;
        }

        var nullableMark = nullability is { ReadState: NullabilityState.Nullable } && !type.IsValueType ? "?" : string.Empty;
        if (Nullable.GetUnderlyingType(type) is { } underlying)
        {
            return TypeName(underlying, nullability?.GenericTypeArguments.FirstOrDefault()) + "?";
        }

        if (type.IsArray)
        {
            var rank = new string(',', type.GetArrayRank() - 1);
            return $"{TypeName(type.GetElementType()!, nullability?.ElementType)}[{rank}]{nullableMark}";
        }

        if (type.IsGenericParameter)
        {
            // Reflection reports every unconstrained T as nullable (it may be instantiated with one), whether the source
            // says T or T?; printing neither keeps the snapshot true. No shipped API uses T? today.
            return type.Name;
        }

        if (Keywords.TryGetValue(type, out var keyword))
        {
            return keyword + nullableMark;
        }

        // Outer.Inner<T>: the declaring types' names, each with its own share of the generic arguments.
        var arguments = type.GetGenericArguments();
        var argumentNullability = nullability?.GenericTypeArguments;
        var chain = new List<Type>();
        for (var t = type; t is not null; t = t.DeclaringType)
        {
            chain.Insert(0, t);
        }

        var name = new StringBuilder(declaration ? string.Empty : chain[0].Namespace is { Length: > 0 } ns ? ns + "." : string.Empty);
        var used = 0;
        foreach (var t in chain)
        {
            if (t != chain[0])
            {
                name.Append('.');
            }

            var tick = t.Name.IndexOf('`', StringComparison.Ordinal);
            name.Append(tick < 0 ? t.Name : t.Name[..tick]);
            var count = t.GetGenericArguments().Length - used;
            if (count > 0)
            {
                var own = Enumerable.Range(used, count).Select(i => TypeName(
                    arguments[i],
                    argumentNullability is { Length: > 0 } && i < argumentNullability.Length ? argumentNullability[i] : null));
                name.Append('<').Append(string.Join(", ", own)).Append('>');
                used += count;
            }
        }

        return name + nullableMark;
    }
}
