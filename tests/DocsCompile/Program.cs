using PriorityAsync.DocsCompile;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;

// Compiles every C# block of README.md and docs/*.md and runs the whole programs (docs/index.md, "Code samples"):
//   dotnet run --project tests/DocsCompile -c Release -p:PriorityAsyncVersion=<packed version> [-- <repository root>]
// First it proves, on a scratch repository, that it catches each kind of failure (SelfTest). Exit code 0 when the
// self-test and every block hold; the failures are listed otherwise.
var root = args.Length > 0 ? Path.GetFullPath(args[0]) : FindRoot(Directory.GetCurrentDirectory());

var selfTest = SelfTest.Run();
Console.WriteLine($"self-test: {(selfTest.Count == 0 ? "every kind of bad block fails the check" : $"{selfTest.Count} problems")}");

// The Service Bus programs (docs/azure-service-bus.md) need a namespace with a queue "orders": without one of yours in
// SERVICEBUS_CONNECTION they run against the in-process test broker, so CI runs them too.
await using var serviceBus = string.IsNullOrEmpty(Environment.GetEnvironmentVariable("SERVICEBUS_CONNECTION"))
    ? await ServiceBusTestBroker.StartAsync()
    : null;
if (serviceBus is not null)
{
    serviceBus.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
    Environment.SetEnvironmentVariable("SERVICEBUS_CONNECTION", serviceBus.ConnectionString);
    Console.WriteLine("SERVICEBUS_CONNECTION: the in-process Service Bus test broker, with a queue 'orders'");
}

var report = DocsCheck.Run(root, TimeSpan.FromSeconds(120), Console.Out);
Console.WriteLine(
    $"{report.Blocks} C# blocks in {report.Pages} pages: {report.Programs} whole programs ({report.Ran} run), {report.Excerpts} excerpts; {report.Failures.Count} failures");
foreach (var failure in selfTest.Concat(report.Failures))
{
    Console.Error.WriteLine(failure);
}

return selfTest.Count == 0 && report.Failures.Count == 0 ? 0 : 1;

static string FindRoot(string folder)
{
    for (var current = folder; current is not null; current = Path.GetDirectoryName(current))
    {
        if (File.Exists(Path.Combine(current, "PriorityAsync.sln")))
        {
            return current;
        }
    }

    throw new InvalidOperationException($"No PriorityAsync.sln above {folder}: pass the repository root as the first argument.");
}
