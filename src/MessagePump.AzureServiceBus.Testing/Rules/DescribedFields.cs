using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Encoding;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Rules;

/// <summary>A described list with a vendor descriptor and its fields in order (how the service encodes rule descriptions, filters and actions).</summary>
internal sealed class DescribedFields : DescribedList
{
    private readonly object?[] _fields;

    public DescribedFields(string name, ulong code, params object?[] fields)
        : base(name, code)
    {
        _fields = fields;
    }

    protected override int FieldCount => _fields.Length;

    protected override void OnEncode(ByteBuffer buffer)
    {
        foreach (var field in _fields)
        {
            Microsoft.Azure.Amqp.AmqpCodec.EncodeObject(field, buffer);
        }
    }

    protected override void OnDecode(ByteBuffer buffer, int count) =>
        throw new NotSupportedException("The broker only encodes rule descriptions.");

    protected override int OnValueSize() => _fields.Sum(Microsoft.Azure.Amqp.AmqpCodec.GetObjectEncodeSize);
}
