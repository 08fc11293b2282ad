using System.Reflection;
using PriorityAsync.MessagePump;
using Xunit.Abstractions;

namespace PriorityAsync.Reliability.Tests.BadInput;

/// <summary>
/// Every public constructor and method of PriorityAsync and PriorityAsync.MessagePump, found by reflection so that none is missed,
/// called with one bad argument at a time (null where null is not allowed, negative, zero, extreme, blank, a lane the
/// scheduler lacks) and every other argument valid: the call succeeds, or it throws an <see cref="ArgumentException"/>
/// naming that parameter — never a <see cref="NullReferenceException"/>, an overflow, a cast or index error, or an
/// exception that names another argument. Option objects get the same treatment property by property.
/// </summary>
public class BadInputTests(ITestOutputHelper output)
{
    private static readonly TimeSpan CallLimit = TimeSpan.FromSeconds(20);
    private static readonly NullabilityInfoContext Nullability = new();

    /// <summary>Members that take no argument a caller could get wrong in a way this table can express, with why.</summary>
    private static readonly Dictionary<string, string> Exempt = new(StringComparer.Ordinal)
    {
        ["MessageContext.DeadLetterAsync"] = "a MessageContext exists only inside a running pump's handler; tests/MessagePump.Tests cover its blank reason",
        ["MessageContext.SettleAsync"] = "a MessageContext exists only inside a running pump's handler; tests/MessagePump.Tests (SettlementContractTests) cover its null settlement",
        ["MessageContext.RecordHandlerFailure"] = "a MessageContext exists only inside a running pump's handler; tests/MessagePump.Tests (RecordHandlerFailureTests) cover its null exception",
        ["PriorityScheduler.YieldTo"] = "valid only inside a scheduler; BadInput_YieldTo_InsideALane covers its bad lane",
        ["LanePriority.Equals"] = "any value is a valid comparand",
        ["LanePriority.CompareTo"] = "any value is a valid comparand",
        ["Awaiter.OnCompleted"] = "the compiler calls it with the continuation it built; a null continuation is covered for LaneAwaitable, and YieldIfNeededAwaitable's awaiter exists only inside a scheduler",
        ["Awaiter.UnsafeOnCompleted"] = "as OnCompleted",
    };

    public static IEnumerable<MethodBase> PublicMembers() =>
        new[] { typeof(PriorityScheduler).Assembly, typeof(PriorityMessagePump).Assembly }
            .SelectMany(a => a.GetExportedTypes())
            .Where(t => !t.IsInterface && !t.IsEnum && !typeof(Delegate).IsAssignableFrom(t) && !t.IsDefined(typeof(System.Runtime.CompilerServices.CompilerGeneratedAttribute)))
            .SelectMany(t => t.GetConstructors().Cast<MethodBase>()
                .Concat(t.GetMethods(BindingFlags.Public | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly)
                    .Where(m => !m.IsSpecialName && !m.IsDefined(typeof(System.Runtime.CompilerServices.CompilerGeneratedAttribute)))))
            .Where(m => m.GetParameters().Length > 0)
            .Select(m => m is MethodInfo { IsGenericMethodDefinition: true } generic ? generic.MakeGenericMethod(typeof(int)) : m);

    [Fact]
    public void EveryPublicMemberWithParameters_IsCalledWithBadInput_OrExemptWithAReason()
    {
        var untested = PublicMembers()
            .Where(m => !Exempt.ContainsKey(Name(m)) && !CanCall(m))
            .Select(m => $"{Name(m)}({string.Join(", ", m.GetParameters().Select(p => p.ParameterType.Name))})")
            .ToArray();

        untested.Should().BeEmpty("a public member must be reached by the bad-input table (add its types to ValidArguments) or exempted with a reason");
    }

    [Fact]
    public async Task EveryPublicMember_RejectsBadArguments_ByNameAndRule()
    {
        var defects = new List<string>();
        var calls = 0;
        foreach (var member in PublicMembers().Where(m => !Exempt.ContainsKey(Name(m)) && CanCall(m)))
        {
            var parameters = member.GetParameters();
            for (var i = 0; i < parameters.Length; i++)
            {
                foreach (var bad in BadArguments(parameters[i]))
                {
                    calls++;
                    await using var valid = new ValidArguments();
                    var failure = await CallAsync(member, valid, i, bad.Value);
                    if (Judge(failure, parameters[i].Name!) is { } defect)
                    {
                        defects.Add($"{Name(member)}({parameters[i].Name} = {bad.Label}): {defect}");
                    }
                }
            }
        }

        output.WriteLine($"{calls} calls with one bad argument; {defects.Count} defect(s).");
        defects.Should().BeEmpty();
    }

    [Theory]
    [InlineData(typeof(PrioritySchedulerOptions))]
    [InlineData(typeof(PriorityTaskSchedulerOptions))]
    [InlineData(typeof(MessagePumpOptions))]
    [InlineData(typeof(InMemoryQueueOptions))]
    public async Task EveryOption_RejectsBadValues_NamingTheOption(Type optionsType)
    {
        var defects = new List<string>();
        foreach (var property in optionsType.GetProperties().Where(p => p.CanWrite))
        {
            foreach (var bad in BadArguments(property))
            {
                await using var valid = new ValidArguments();
                var options = valid.For(optionsType)!;
                property.SetValue(options, bad.Value);
                var failure = await CaptureAsync(() => Consume(options, valid));
                if (Judge(failure, property.Name) is { } defect)
                {
                    defects.Add($"{optionsType.Name}.{property.Name} = {bad.Label}: {defect}");
                }
            }
        }

        defects.Should().BeEmpty();
    }

    [Fact]
    public async Task BadInput_YieldTo_InsideALane()
    {
        await using var valid = new ValidArguments();
        var failure = await CaptureAsync(() => valid.Scheduler.GetLane(LanePriority.Processing).Run(async () => await PriorityScheduler.YieldTo(LanePriority.FromRank(9))));

        Judge(failure, "priority").Should().BeNull();
        failure.Should().NotBeNull("a lane the scheduler lacks is refused");
    }

    private static string Name(MethodBase member) => $"{member.DeclaringType!.Name}.{(member.IsConstructor ? "ctor" : member.Name)}";

    private static bool CanCall(MethodBase member) =>
        (member.IsStatic || member.IsConstructor || ValidArguments.Knows(member.DeclaringType!))
        && member.GetParameters().All(p => ValidArguments.Knows(p.ParameterType) || IsNullableReference(p));

    private static bool IsNullableReference(ParameterInfo parameter) =>
        !parameter.ParameterType.IsValueType && Nullability.Create(parameter).WriteState == NullabilityState.Nullable;

    private static IEnumerable<(object? Value, string Label)> BadArguments(ParameterInfo parameter)
    {
        if (!parameter.ParameterType.IsValueType && Nullability.Create(parameter).WriteState != NullabilityState.Nullable)
        {
            yield return (null, "null");
        }

        foreach (var value in BadValues.For(parameter.ParameterType))
        {
            yield return (value, Describe(value));
        }
    }

    private static IEnumerable<(object? Value, string Label)> BadArguments(PropertyInfo property)
    {
        if (!property.PropertyType.IsValueType && Nullability.Create(property).WriteState != NullabilityState.Nullable)
        {
            yield return (null, "null");
        }

        foreach (var value in BadValues.For(property.PropertyType))
        {
            yield return (value, Describe(value));
        }
    }

    private static string Describe(object? value) => value switch
    {
        null => "null",
        string s => $"\"{s}\"",
        _ => value.ToString() ?? "?",
    };

    /// <summary>Calls <paramref name="member"/> with argument <paramref name="index"/> bad; returns what it threw, or null.</summary>
    private static Task<Exception?> CallAsync(MethodBase member, ValidArguments valid, int index, object? bad)
    {
        var parameters = member.GetParameters();
        var arguments = parameters.Select((p, i) => i == index ? bad : ValidArguments.Knows(p.ParameterType) ? valid.For(p.ParameterType) : null).ToArray();
        return CaptureAsync(() => member switch
        {
            ConstructorInfo constructor => Dispose(constructor.Invoke(arguments)),
            MethodInfo method => method.Invoke(method.IsStatic ? null : valid.For(member.DeclaringType!), arguments),
            _ => null,
        });
    }

    private static object? Dispose(object created)
    {
        (created as IDisposable)?.Dispose();
        return null;
    }

    /// <summary>Makes the consumer of an options object validate it.</summary>
    private static object? Consume(object options, ValidArguments valid)
    {
        switch (options)
        {
            case PriorityTaskSchedulerOptions tasks:
                new PriorityTaskScheduler(tasks).Dispose();
                break;
            case PrioritySchedulerOptions context:
                new PriorityAsyncContext(context).Dispose();
                break;
            case MessagePumpOptions pump:
                _ = new PriorityMessagePump(valid.Queue, (_, _) => Task.CompletedTask, valid.Scheduler, pump);
                break;
            case InMemoryQueueOptions queue:
                valid.Broker.CreateQueue($"q{Guid.NewGuid():N}", queue);
                break;
        }

        return null;
    }

    private static async Task<Exception?> CaptureAsync(Func<object?> call)
    {
        try
        {
            var result = call();
            switch (result)
            {
                case Task task:
                    await task.WaitAsync(CallLimit);
                    break;
                case ValueTask valueTask:
                    await valueTask.AsTask().WaitAsync(CallLimit);
                    break;
            }

            return null;
        }
        catch (TargetInvocationException ex) when (ex.InnerException is not null)
        {
            return ex.InnerException;
        }
        catch (Exception ex)
        {
            return ex;
        }
    }

    /// <summary>Returns what is wrong with how the call failed, or null when it succeeded or failed as it should.</summary>
    private static string? Judge(Exception? failure, string parameter) => failure switch
    {
        null => null,
        ArgumentException argument when argument.ParamName == parameter => null,
        ArgumentException argument => $"{argument.GetType().Name} names '{argument.ParamName}' instead of '{parameter}': {argument.Message}",
        TimeoutException => "the call hung",
        _ => $"{failure.GetType().Name}: {failure.Message}",
    };
}
