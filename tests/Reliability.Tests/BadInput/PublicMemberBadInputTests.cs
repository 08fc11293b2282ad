using System.Reflection;
using Xunit.Abstractions;
using PriorityAsync.MessagePump;
using PriorityAsync.Reliability.Tests.Support;

namespace PriorityAsync.Reliability.Tests.BadInput;

/// <summary>
/// Scenario 6: every public constructor, method and options property of PriorityAsync and PriorityAsync.MessagePump, fed each bad
/// value of its parameter's type with otherwise valid arguments. Allowed: success, or an ArgumentException naming the
/// parameter (the option's property for options objects) with a message. Anything else is a defect.
/// </summary>
public class PublicMemberBadInputTests(ITestOutputHelper output)
{
    // Members the table does not exercise, and why. A public member neither exercised nor listed here fails the suite.
    private static readonly Dictionary<string, string> Exempt = new()
    {
        ["Awaiter.OnCompleted(Action)"] = "awaiter of SwitchTo/YieldIfNeeded, called by the compiler's state machine with a non-null continuation; no public way to build a valid awaiter outside an await",
        ["Awaiter.UnsafeOnCompleted(Action)"] = "as OnCompleted: called only by the compiler's state machine",
        ["MessageContext.RecordHandlerFailure(Exception)"] = "a MessageContext exists only inside a running pump's handler; tests/MessagePump.Tests (RecordHandlerFailureTests) cover its null exception",
        ["InMemoryDeadLetter.Deconstruct(String&, String&, Int32&)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["InMemoryDeadLetter.Equals(InMemoryDeadLetter)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["InMemoryDeadLetter.Equals(Object)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["InMemoryDeadLetter.set_DeliveryCount(Int32)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["InMemoryDeadLetter.set_MessageId(String)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["InMemoryDeadLetter.set_Reason(String)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["InMemoryQueueStatistics.Equals(InMemoryQueueStatistics)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["InMemoryQueueStatistics.Equals(Object)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["InMemoryQueueStatistics.set_Available(Int32)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["InMemoryQueueStatistics.set_AwaitingRedelivery(Int32)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["InMemoryQueueStatistics.set_InFlight(Int32)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["MessagePumpStatistics.Equals(MessagePumpStatistics)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["MessagePumpStatistics.Equals(Object)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["MessagePumpStatistics.set_HandlersRunningAfterStop(Int32)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["MessagePumpStatistics.set_StopOverrun(Nullable`1)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["MessagePumpStatistics.set_InFlight(Int32)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["MessagePumpStatistics.set_PeakInFlight(Int32)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["MessagePumpStatistics.set_MinHandOffHeadroom(Nullable`1)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["LeaseKeeperStatistics.Equals(LeaseKeeperStatistics)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["LeaseKeeperStatistics.Equals(Object)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["LeaseKeeperStatistics.set_Kept(Int32)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["LeaseKeeperStatistics.set_MinRecentSlack(Nullable`1)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["LateRenewal.Deconstruct(TimeSpan&, TimeSpan&)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["LateRenewal.Equals(Object)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["LateRenewal.set_Planned(TimeSpan)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["LateRenewal.set_Slack(TimeSpan)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["LeaseRenewal.Equals(Object)"] = "compiler-generated member of a record (value equality, deconstruction, init accessor): no validation to test",
        ["LanePriority.Equals(Object)"] = "equality: null is a valid argument and returns false (covered by the CLR contract)",
        ["InMemoryMessage.DeadLetterAsync(String, CancellationToken)"] = "an InMemoryMessage exists only as a received message; not exercised here (the swarm scenarios of the pump own received messages) - UNFINISHED",
        ["MessageContext.DeadLetterAsync(String)"] = "a MessageContext exists only inside a running pump handler; not exercised here - UNFINISHED",
        ["ILeasedMessage.DeadLetterAsync(String, String, CancellationToken)"] = "a default interface method over a received message; it forwards the reason to the implementation's DeadLetterAsync(String, CancellationToken), which checks it",
        ["MessageContext.DeadLetterAsync(String, String)"] = "a MessageContext exists only inside a running pump handler; tests/MessagePump.Tests (MessageContextTests) cover its blank reason",
        ["MessageContext.SettleAsync(MessageSettlement)"] = "a MessageContext exists only inside a running pump handler; tests/MessagePump.Tests (SettlementContractTests) cover its null settlement",
    };

    private static readonly Type[] Forbidden =
    [
        typeof(NullReferenceException), typeof(OverflowException), typeof(InvalidCastException),
        typeof(IndexOutOfRangeException), typeof(TaskSchedulerException),
    ];

    [Fact]
    public void EveryPublicMember_BadArguments_SucceedOrThrowArgumentExceptionNamingTheParameter()
    {
        var defects = new List<string>();
        var notExercised = new List<string>();
        var tried = 0;
        foreach (var member in PublicMembers())
        {
            var name = Describe(member);
            var parameters = member.GetParameters();
            if (parameters.All(p => CoreBadValues.For(p.ParameterType).Count == 0) && parameters.Length > 0 && !Exempt.ContainsKey(name))
            {
                continue; // no parameter has a bad value in the table (enums, bools, longs, tokens): nothing to feed
            }

            if (parameters.Length == 0)
            {
                continue; // parameterless: no argument can be bad
            }

            var valid = new object?[parameters.Length];
            var constructible = true;
            for (var i = 0; i < parameters.Length; i++)
            {
                constructible &= CoreBadValues.TryValid(parameters[i].ParameterType, out valid[i]);
            }

            object? target = null;
            if (member is MethodInfo { IsStatic: false } method && !CoreBadValues.TryValid(method.DeclaringType!, out target))
            {
                constructible = false;
            }

            if (!constructible)
            {
                if (!Exempt.ContainsKey(name))
                {
                    notExercised.Add(name);
                }

                continue;
            }

            for (var i = 0; i < parameters.Length; i++)
            {
                foreach (var (label, bad) in CoreBadValues.For(parameters[i].ParameterType))
                {
                    // Fresh valid arguments and target for each call: a call that succeeds may use them up (a settled
                    // message, a message now kept), which would spoil the next call's verdict.
                    var args = new object?[parameters.Length];
                    for (var j = 0; j < parameters.Length; j++)
                    {
                        CoreBadValues.TryValid(parameters[j].ParameterType, out args[j]);
                    }

                    if (target is not null)
                    {
                        CoreBadValues.TryValid(member.DeclaringType!, out target);
                    }

                    args[i] = bad;
                    tried++;
                    var outcome = Invoke(member, target, args);
                    var verdict = Judge(outcome, parameters[i].Name!);
                    if (verdict is not null)
                    {
                        defects.Add($"{name} with {parameters[i].Name} = {label}: {verdict}");
                    }
                }
            }
        }

        output.WriteLine($"{tried} bad calls over the public members; {Exempt.Count} exempt; {defects.Count} defects");
        notExercised.Should().BeEmpty("every public member with parameters is exercised or exempt with a reason");
        tried.Should().BeGreaterThan(50);
        defects.Should().BeEmpty();
    }

    public static TheoryData<string> OptionsConsumers() => new() { "PrioritySchedulerOptions", "PriorityTaskSchedulerOptions", "InMemoryQueueOptions", "LeaseKeeperOptions" };

    [Fact]
    public void MessagePumpOptions_BadValue_PumpSucceedsOrThrowsNamingTheOption() => OptionsProperty_BadValue_ConsumerSucceedsOrThrowsNamingTheOption("MessagePumpOptions");

    [Theory]
    [MemberData(nameof(OptionsConsumers))]
    public void OptionsProperty_BadValue_ConsumerSucceedsOrThrowsNamingTheOption(string optionsType)
    {
        var (type, consume) = Consumer(optionsType);
        var defects = new List<string>();
        var tried = 0;
        foreach (var property in type.GetProperties(BindingFlags.Public | BindingFlags.Instance).Where(p => p.SetMethod?.IsPublic == true))
        {
            foreach (var (label, bad) in CoreBadValues.For(property.PropertyType))
            {
                CoreBadValues.TryValid(type, out var options);
                tried++;
                Exception? setFailure = null;
                try
                {
                    property.SetValue(options, bad);
                }
                catch (TargetInvocationException e)
                {
                    setFailure = e.InnerException;
                }

                var outcome = setFailure ?? Run(() => consume(options!));
                var verdict = Judge(outcome, property.Name);
                if (verdict is not null)
                {
                    defects.Add($"{type.Name}.{property.Name} = {label}: {verdict}");
                }
            }
        }

        output.WriteLine($"{optionsType}: {tried} bad option values; {defects.Count} defects");
        tried.Should().BePositive();
        defects.Should().BeEmpty();
    }

    private static (Type, Func<object, object?>) Consumer(string name) => name switch
    {
        "PrioritySchedulerOptions" => (typeof(PrioritySchedulerOptions), o => Disposed(new PriorityAsyncContext((PrioritySchedulerOptions)o))),
        "PriorityTaskSchedulerOptions" => (typeof(PriorityTaskSchedulerOptions), o => Disposed(new PriorityTaskScheduler((PriorityTaskSchedulerOptions)o))),
        "MessagePumpOptions" => (typeof(MessagePumpOptions), o => new PriorityAsync.MessagePump.PriorityMessagePump(
            new InMemoryTransport(new VirtualTimeProvider()).CreateQueue("q"), (_, _) => Task.CompletedTask, new PriorityAsyncContext(), (MessagePumpOptions)o)),
        "LeaseKeeperOptions" => (typeof(LeaseKeeperOptions), o => new LeaseKeeper(new PriorityAsyncContext(), (LeaseKeeperOptions)o)),
        _ => (typeof(InMemoryQueueOptions), o => new InMemoryTransport(new VirtualTimeProvider()).CreateQueue("q", (InMemoryQueueOptions)o)),
    };

    private static object? Disposed(IDisposable disposable)
    {
        disposable.Dispose();
        return null;
    }

    private static IEnumerable<MethodBase> PublicMembers() =>
        CoreBadValues.Assemblies
            .SelectMany(a => a.GetExportedTypes())
            .Where(t => !typeof(Delegate).IsAssignableFrom(t))
            .SelectMany(t => t.GetConstructors().Cast<MethodBase>()
                .Concat(t.GetMethods(BindingFlags.Public | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly)
                    .Where(m => !m.IsSpecialName || m.Name.StartsWith("set_", StringComparison.Ordinal))))
            .Where(m => !t_isAbstract(m))
            .Select(m => m is MethodInfo { IsGenericMethodDefinition: true } g ? g.MakeGenericMethod(g.GetGenericArguments().Select(_ => typeof(int)).ToArray()) : m)
            .OrderBy(Describe, StringComparer.Ordinal);

    private static bool t_isAbstract(MethodBase m) => m.IsAbstract || (m is ConstructorInfo && m.DeclaringType!.IsAbstract);

    private static string Describe(MethodBase m) =>
        $"{m.DeclaringType!.Name}.{(m is ConstructorInfo ? "ctor" : m.Name)}({string.Join(", ", m.GetParameters().Select(p => p.ParameterType.Name))})";

    private static Exception? Invoke(MethodBase member, object? target, object?[] args)
    {
        object? Call() => member is ConstructorInfo ctor ? ctor.Invoke(args) : member.Invoke(target, args);

        // The ambient members (YieldTo, YieldIfNeeded) require a scheduler first: call them from inside one.
        if (member.IsStatic && member.DeclaringType == typeof(PriorityScheduler))
        {
            return Run(() =>
            {
                object? result = null;
                PriorityAsyncContext.Run(() =>
                {
                    try
                    {
                        result = Call();
                    }
                    catch (TargetInvocationException e)
                    {
                        System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(e.InnerException!);
                    }

                    return Task.CompletedTask;
                });
                return result;
            });
        }

        return Run(Call);
    }

    /// <summary>Runs on its own thread with a bound; a returned task is awaited with a bound too. Null when it succeeded.</summary>
    private static Exception? Run(Func<object?> call)
    {
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                var result = call();
                if (result is Task task && ((IAsyncResult)task).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(2)) && task.IsFaulted)
                {
                    failure = task.Exception!.InnerException;
                }
                else if (result is ValueTask valueTask && valueTask.IsFaulted)
                {
                    failure = valueTask.AsTask().Exception!.InnerException;
                }
            }
            catch (TargetInvocationException e)
            {
                failure = e.InnerException;
            }
            catch (Exception e)
            {
                failure = e;
            }
        })
        { IsBackground = true };
        thread.Start();
        return thread.Join(TimeSpan.FromSeconds(10)) ? failure : new TimeoutException("the call hung for 10 s");
    }

    /// <summary>Null when the outcome is allowed, else what is wrong.</summary>
    private static string? Judge(Exception? outcome, string expectedName) => outcome switch
    {
        null => null,
        ArgumentException a when a.ParamName == expectedName && !string.IsNullOrWhiteSpace(a.Message) => null,
        ArgumentException a => $"{a.GetType().Name} names '{a.ParamName}' instead of '{expectedName}': {FirstLine(a.Message)}",
        _ when Forbidden.Contains(outcome.GetType()) => $"forbidden {outcome.GetType().Name}: {FirstLine(outcome.Message)}",
        _ => $"{outcome.GetType().Name} instead of an ArgumentException: {FirstLine(outcome.Message)}",
    };

    private static string FirstLine(string message) => message.Split('\n')[0].Trim();
}
