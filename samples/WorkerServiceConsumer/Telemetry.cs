using Microsoft.Extensions.DependencyInjection;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;
using PriorityAsync;
using PriorityAsync.MessagePump;

namespace WorkerServiceConsumer;

/// <summary>
/// The pump's metrics and traces through OpenTelemetry, written to the console (<c>--telemetry</c>, or
/// <c>Sample:Telemetry</c> set to <c>true</c>). Swap the console exporters for your backend's (OTLP, Prometheus...).
/// </summary>
public static class Telemetry
{
    /// <summary>The command-line flag that turns telemetry on.</summary>
    public const string Flag = "--telemetry";

    /// <summary>The configuration key that turns telemetry on.</summary>
    public const string ConfigurationKey = "Sample:Telemetry";

    /// <summary>Exports the pump's and the scheduler's meters and the pump's activities to the console.</summary>
    /// <param name="services">The host's services.</param>
    /// <returns><paramref name="services"/>.</returns>
    public static IServiceCollection AddConsoleTelemetry(this IServiceCollection services)
    {
        services.AddOpenTelemetry()
            .ConfigureResource(resource => resource.AddService("WorkerServiceConsumer"))
            .WithMetrics(metrics => metrics
                .AddMeter(MessagePumpDiagnostics.MeterName, PriorityAsyncMetrics.MeterName)
                .AddConsoleExporter())
            .WithTracing(tracing => tracing
                .AddSource(MessagePumpDiagnostics.ActivitySourceName)
                .AddConsoleExporter());
        return services;
    }
}
