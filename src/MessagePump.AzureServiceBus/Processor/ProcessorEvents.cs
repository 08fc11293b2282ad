namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>The rules of the processors' events, shared by both shapes: one handler per event, not changed while processing.</summary>
internal static class ProcessorEvents
{
    /// <summary>Sets <paramref name="field"/> to <paramref name="value"/> under <paramref name="gate"/>.</summary>
    public static void Set<T>(Lock gate, ref T? field, T value, string owner, string name, Func<bool> isProcessing)
        where T : Delegate
    {
        ArgumentNullException.ThrowIfNull(value, name);
        lock (gate)
        {
            ThrowIfProcessing(owner, name, isProcessing);
            if (field is not null)
            {
                throw new NotSupportedException($"{owner}.{name} already has a handler; remove it first (one handler per event, as the SDK's processors).");
            }

            field = value;
        }
    }

    /// <summary>Clears <paramref name="field"/> when it holds <paramref name="value"/>, under <paramref name="gate"/>.</summary>
    public static void Remove<T>(Lock gate, ref T? field, T value, string owner, string name, Func<bool> isProcessing)
        where T : Delegate
    {
        ArgumentNullException.ThrowIfNull(value, name);
        lock (gate)
        {
            ThrowIfProcessing(owner, name, isProcessing);
            if (!Equals(field, value))
            {
                throw new NotSupportedException($"The handler given is not the one {owner}.{name} has.");
            }

            field = null;
        }
    }

    private static void ThrowIfProcessing(string owner, string name, Func<bool> isProcessing)
    {
        if (isProcessing())
        {
            throw new InvalidOperationException($"{owner}.{name} cannot change while the processor is processing; stop it first.");
        }
    }
}
