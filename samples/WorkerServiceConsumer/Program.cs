using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.Hosting;
using WorkerServiceConsumer;

// A worker service with a hosted PriorityMessagePump named "orders":
//   dotnet run --project samples/WorkerServiceConsumer                    # runs until Ctrl+C
//   dotnet run --project samples/WorkerServiceConsumer -- --messages 20   # stops after 20 messages (exit code 0)
// Options come from appsettings.json (MessagePumps:orders), overridable as usual, e.g. --MessagePumps:orders:MaxInFlight 4
// or the environment variable MessagePumps__orders__MaxInFlight=4.
// --telemetry (or Sample:Telemetry=true) writes the pump's metrics and traces to the console through OpenTelemetry.
// The content root is the output folder, where appsettings.json is copied, wherever the command runs from.
var telemetry = args.Contains(Telemetry.Flag);
args = [.. args.Where(arg => arg != Telemetry.Flag)];
var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { Args = args, ContentRootPath = AppContext.BaseDirectory });
if (telemetry || builder.Configuration.GetValue<bool>(Telemetry.ConfigurationKey))
{
    builder.Services.AddConsoleTelemetry();
}

builder.Services.Configure<SampleOptions>(builder.Configuration.GetSection("Sample"));
if (builder.Configuration["messages"] is { } messages)
{
    builder.Services.Configure<SampleOptions>(o => o.Messages = int.Parse(messages, System.Globalization.CultureInfo.InvariantCulture));
}

builder.Services.AddSingleton(_ =>
{
    var broker = new InMemoryTransport();
    broker.CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
    return broker;
});
builder.Services.AddSingleton<Progress>();
builder.Services.AddScoped<OrderUnitOfWork>();
builder.Services.AddHostedService<OrderProducer>();

// The pump: a new scope per message, an OrderHandler (and its OrderUnitOfWork) resolved from it. It runs on a
// PriorityTaskScheduler of its own; register a PriorityScheduler singleton to share one between pumps.
builder.Services.AddMessagePump("orders", provider => provider.GetRequiredService<InMemoryTransport>().GetQueue("orders"))
    .BindConfiguration("MessagePumps:orders")
    .WithHandler<OrderHandler>();

using var host = builder.Build();
await host.StartAsync();
await host.WaitForShutdownAsync();

var pump = host.Services.GetRequiredKeyedService<MessagePumpHostedService>("orders").Pump;
var statistics = pump.GetStatistics();
var expected = host.Services.GetRequiredService<IOptions<SampleOptions>>().Value.Messages;
Console.WriteLine($"{pump}: received {statistics.Received}, completed {statistics.Completed}, abandoned {statistics.Abandoned}, " +
    $"leases lost {statistics.LeasesLost}; units of work committed {OrderUnitOfWork.Committed}");
return expected > 0 && statistics.Completed < expected ? 1 : 0;
