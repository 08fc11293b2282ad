using System.Buffers.Binary;
using System.Diagnostics;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>
/// Splits an encoded AMQP message into its sections (described values with a numeric descriptor: header 0x70 …
/// footer 0x78) without decoding them, so a body of several data sections can be kept byte for byte.
/// </summary>
internal static class AmqpSections
{
    private const ulong FirstBodySection = 0x75;
    private const ulong LastBodySection = 0x77;

    /// <summary>
    /// The sections of <paramref name="head"/> with their body sections (data, sequence, value) replaced by those of
    /// <paramref name="body"/>, placed where a body goes (before a footer). Null when either cannot be split.
    /// </summary>
    public static byte[]? Splice(byte[] head, byte[] body)
    {
        var headSections = Split(head);
        var bodySections = Split(body);
        if (headSections is null || bodySections is null)
        {
            return null;
        }

        var output = new List<byte>(head.Length + body.Length);
        var bodyWritten = false;
        foreach (var (code, offset, length) in headSections)
        {
            if (code is >= FirstBodySection and <= LastBodySection)
            {
                continue;
            }

            if (code > LastBodySection && !bodyWritten)
            {
                AppendBody(output, body, bodySections);
                bodyWritten = true;
            }

            output.AddRange(head.AsSpan(offset, length));
        }

        if (!bodyWritten)
        {
            AppendBody(output, body, bodySections);
        }

        return output.ToArray();
    }

    private static void AppendBody(List<byte> output, byte[] body, List<(ulong Code, int Offset, int Length)> sections)
    {
        foreach (var (code, offset, length) in sections)
        {
            if (code is >= FirstBodySection and <= LastBodySection)
            {
                output.AddRange(body.AsSpan(offset, length));
            }
        }
    }

    /// <summary>The sections in order (descriptor code, offset, length), or null when the bytes are not a sequence of sections this reads.</summary>
    private static List<(ulong Code, int Offset, int Length)>? Split(byte[] bytes)
    {
        var sections = new List<(ulong, int, int)>();
        var position = 0;
        while (position < bytes.Length)
        {
            var start = position;
            if (bytes[position++] != 0x00 || position >= bytes.Length)
            {
                return null;
            }

            ulong code;
            switch (bytes[position++])
            {
                case 0x53 when position < bytes.Length:
                    code = bytes[position++];
                    break;
                case 0x80 when position + 8 <= bytes.Length:
                    code = BinaryPrimitives.ReadUInt64BigEndian(bytes.AsSpan(position, 8));
                    position += 8;
                    break;
                default:
                    return null;
            }

            if (SkipValue(bytes, position) is not { } end)
            {
                return null;
            }

            position = end;
            sections.Add((code, start, position - start));
        }

        Debug.Assert(position == bytes.Length, "Sections end where the message ends.");
        return sections;
    }

    /// <summary>The offset after the encoded value at <paramref name="position"/>, or null for a constructor this does not read.</summary>
    private static int? SkipValue(byte[] bytes, int position)
    {
        if (position >= bytes.Length)
        {
            return null;
        }

        var constructor = bytes[position++];
        long size = constructor switch
        {
            >= 0x40 and <= 0x45 => 0,
            >= 0x50 and <= 0x56 => 1,
            >= 0x60 and <= 0x61 => 2,
            >= 0x70 and <= 0x74 => 4,
            >= 0x80 and <= 0x84 => 8,
            0x94 or 0x98 => 16,
            0xa0 or 0xa1 or 0xa3 or 0xc0 or 0xc1 or 0xe0 => position < bytes.Length ? 1 + bytes[position] : -1,
            0xb0 or 0xb1 or 0xb3 or 0xd0 or 0xd1 or 0xf0 => position + 4 <= bytes.Length ? 4L + BinaryPrimitives.ReadUInt32BigEndian(bytes.AsSpan(position, 4)) : -1,
            _ => -1,
        };
        return size < 0 || position + size > bytes.Length ? null : (int)(position + size);
    }
}
