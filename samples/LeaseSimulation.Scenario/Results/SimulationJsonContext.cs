using System.Text.Json.Serialization;

namespace LeaseSimulation.Results;

/// <summary>The source-generated System.Text.Json context for <c>--json</c>: camelCase, indented.</summary>
[JsonSourceGenerationOptions(PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase, WriteIndented = true)]
[JsonSerializable(typeof(IReadOnlyList<SimulationResult>))]
[JsonSerializable(typeof(SimulationResult[]))]
public sealed partial class SimulationJsonContext : JsonSerializerContext
{
}
