using Azure.Messaging.ServiceBus;
using Azure.Core;
using Azure.Identity;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.AzureServiceBus.Hosting;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>The hosting samples of docs/azure-service-bus.md; <see cref="DocsSampleTests"/> builds them (nothing signs in).</summary>
internal static class HostingSample
{
    public static IHost BuildFromConfiguration(string[] args)
    {
        // <hosting>
        var builder = Host.CreateApplicationBuilder(args);
        builder.Services.AddSingleton<TokenCredential>(new DefaultAzureCredential()); // used when FullyQualifiedNamespace is set
        builder.Services
            .AddServiceBusMessagePump("orders", builder.Configuration.GetSection("Pumps:Orders:ServiceBus"))
            .BindConfiguration("Pumps:Orders:Pump")                                     // MessagePumpOptions
            .WithHandler(async (context, cancellationToken) =>
            {
                await Task.Delay(10, cancellationToken);                                   // your work
            });
        var host = builder.Build();
        // </hosting>
        return host;
    }

    public static IHost BuildProcessorHost(string[] args)
    {
        // <hosting-processor>
        var builder = Host.CreateApplicationBuilder(args);
        builder.Services.AddSingleton(new ServiceBusClient(builder.Configuration["ServiceBus:ConnectionString"]));
        builder.Services.AddServiceBusPumpProcessor(
            provider => provider.GetRequiredService<ServiceBusClient>().CreatePumpProcessor("orders", new ServiceBusPumpProcessorOptions
            {
                MaxConcurrentCalls = 16,
            }),
            (provider, processor) =>
            {
                processor.ProcessMessageAsync += async args =>
                {
                    await using var scope = provider.CreateAsyncScope();              // scoped services per message
                    await Task.Delay(10, args.CancellationToken);                      // your work
                    await args.CompleteMessageAsync(args.Message);
                };
                processor.ProcessErrorAsync += args =>
                {
                    Console.Error.WriteLine($"{args.ErrorSource}: {args.Exception.Message}");
                    return Task.CompletedTask;
                };
            });
        var host = builder.Build();
        // </hosting-processor>
        return host;
    }

    public static void ConfigureInCode(IServiceCollection services)
    {
        // <hosting-code>
        services.AddServiceBusMessagePump("billing", (ServiceBusSourceSettings settings) =>
        {
            settings.FullyQualifiedNamespace = "contoso.servicebus.windows.net";
            settings.TopicName = "invoices";
            settings.SubscriptionName = "billing";
            settings.MaxConcurrentSessions = 8;                                           // a session-enabled subscription
            settings.Source.LockDuration = TimeSpan.FromSeconds(60);
        }).WithHandler((context, cancellationToken) => Task.CompletedTask);
        // </hosting-code>
    }
}
