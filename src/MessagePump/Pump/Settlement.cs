namespace PriorityAsync.MessagePump;

/// <summary>How the pump settles a message.</summary>
internal enum Settlement
{
    Complete,
    Abandon,
    DeadLetter,
}
