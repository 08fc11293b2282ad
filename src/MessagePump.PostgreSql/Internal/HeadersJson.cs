using System.Collections.ObjectModel;
using System.Text;
using System.Text.Json;

namespace PriorityAsync.MessagePump.PostgreSql.Internal;

/// <summary>Headers as stored in the <c>headers</c> column: a JSON object of strings, or NULL for none.</summary>
internal static class HeadersJson
{
    /// <summary>The JSON of <paramref name="headers"/>, or <see langword="null"/> when there are none.</summary>
    public static string? Write(IReadOnlyDictionary<string, string>? headers, string paramName)
    {
        if (headers is null || headers.Count == 0)
        {
            return null;
        }

        using var buffer = new MemoryStream();
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            foreach (var (name, value) in headers)
            {
                ArgumentNullException.ThrowIfNull(name, paramName);
                writer.WriteString(name, value ?? throw new ArgumentException($"Header '{name}' has a null value.", paramName));
            }

            writer.WriteEndObject();
        }

        return Encoding.UTF8.GetString(buffer.GetBuffer(), 0, (int)buffer.Length);
    }

    /// <summary>The headers of a stored JSON object; empty for NULL.</summary>
    public static IReadOnlyDictionary<string, string> Read(string? json)
    {
        if (json is null)
        {
            return ReadOnlyDictionary<string, string>.Empty;
        }

        using var document = JsonDocument.Parse(json);
        var headers = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var property in document.RootElement.EnumerateObject())
        {
            headers[property.Name] = property.Value.ValueKind == JsonValueKind.String ? property.Value.GetString()! : property.Value.GetRawText();
        }

        return headers.AsReadOnly();
    }
}
