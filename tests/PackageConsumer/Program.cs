using PriorityAsync.PackageConsumer;
using PriorityAsync.QuickStarts;

// A user's first program on the packages, also published with NativeAOT: the quick start of docs/message-pump.md, the
// pump as a hosted service, the PostgreSQL transport (on a server when PRIORITYASYNC_POSTGRES is set), and a Service
// Bus round trip through the pump against the in-process test broker. Exit code 0
// means every step completed. (README.md's first block runs as a new console app of its own, and every block of the
// docs in tests/DocsCompile: .ci/consumer.sh.)
var pumped = await QuickStartSample.RunAsync();
Console.WriteLine($"docs/message-pump.md quick start: {pumped.Completed} of 10 messages completed");

var hosted = await HostedPump.RunAsync();
Console.WriteLine($"MessagePumpHostedService: {hosted} of 3 messages completed");

var postgres = await PostgreSqlRoundTrip.RunAsync(Environment.GetEnvironmentVariable("PRIORITYASYNC_POSTGRES"));
Console.WriteLine($"PostgreSQL transport: {postgres}");

var serviceBus = await ServiceBusRoundTrip.RunAsync();
Console.WriteLine($"Service Bus transport: {serviceBus}");

return pumped.Completed == 10 && hosted == 3 ? 0 : 1;
