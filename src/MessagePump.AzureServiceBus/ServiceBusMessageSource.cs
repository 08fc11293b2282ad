using System.Collections.Concurrent;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// An <see cref="IMessageSource"/> over a <see cref="ServiceBusReceiver"/> in peek-lock mode, for a queue or a topic
/// subscription: <see cref="ReceiveBatchAsync(int, CancellationToken)"/> is one <see cref="ServiceBusReceiver.ReceiveMessagesAsync(int, TimeSpan?, CancellationToken)"/>
/// sized by the pump's admission, and each message is a <see cref="ServiceBusLeasedMessage"/>. Thread-safe.
/// </summary>
/// <remarks>
/// <para>
/// Completions: Service Bus has no batch settlement, so <see cref="IMessageSource.CompletesBatchesNatively"/> is
/// false and a <see cref="PriorityMessagePump"/> completes each message with its own call, concurrently; each call is
/// sent whatever the last answered expiry says, and the broker's answer decides (<see cref="ServiceBusLeasedMessage"/>).
/// </para>
/// <para>
/// Open one through <see cref="ServiceBusTransport.OpenAsync"/> (it reads the entity's lock duration where the
/// credentials allow), or wrap a receiver you created. See <c>docs/azure-service-bus.md</c>.
/// </para>
/// </remarks>
public sealed class ServiceBusMessageSource : IMessageSource, IAsyncDisposable
{
    /// <summary>The source's <see cref="IMessageSource.MessagingSystem"/>: OpenTelemetry's <c>messaging.system</c> for Azure Service Bus.</summary>
    internal const string MessagingSystemName = "servicebus";

    private readonly ServiceBusReceiver _receiver;
    private readonly bool _ownsReceiver;
    private readonly ServiceBusSourceOptions _options;
    private readonly TimeProvider _clock;
    private volatile Exception? _fault;
    private long _observedLockTicks = -1;
    private readonly ManagementLink _managementLink;
    private readonly EntityRetry _entityRetry;
    private readonly ConcurrentQueue<ILeasedMessage> _deferredReceived = new();
    private CancellationTokenSource? _receiveWake; // ends the receive under way when deferred messages arrive for the pump

    /// <summary>Wraps a receiver you created (and dispose after the source).</summary>
    /// <param name="receiver">A peek-lock receiver of a queue or a subscription; not a session receiver.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here. Without
    /// <see cref="ServiceBusSourceOptions.LockDuration"/> the source does not know the lock duration before the first receive.</param>
    /// <exception cref="ArgumentNullException"><paramref name="receiver"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="receiver"/> is in ReceiveAndDelete mode, is a session receiver, or is closed; or an option breaks its rule.</exception>
    public ServiceBusMessageSource(ServiceBusReceiver receiver, ServiceBusSourceOptions? options = null)
        : this(receiver, ParseEntity(receiver), (options ?? new ServiceBusSourceOptions()).LockDuration, options, ownsReceiver: false)
    {
    }

    internal ServiceBusMessageSource(ServiceBusReceiver receiver, ServiceBusEntity entity, TimeSpan? lockDuration, ServiceBusSourceOptions? options, bool ownsReceiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        ThrowIfUnusable(receiver, entity, nameof(receiver));
        if (receiver is ServiceBusSessionReceiver)
        {
            throw new ArgumentException($"The receiver of the {entity} is a session receiver: wrap it in a ServiceBusSessionMessageSource.", nameof(receiver));
        }

        _options = (options ?? new ServiceBusSourceOptions()).Clone();
        _options.Validate();
        _receiver = receiver;
        _managementLink = new ManagementLink(receiver);
        _ownsReceiver = ownsReceiver;
        _clock = _options.TimeProvider ?? TimeProvider.System;
        _entityRetry = new EntityRetry(_clock);
        Entity = entity;
        LockDuration = lockDuration;
    }

    /// <summary>Gets the entity the source receives from.</summary>
    public ServiceBusEntity Entity { get; }

    /// <summary>Gets the receiver.</summary>
    public ServiceBusReceiver Receiver => _receiver;

    /// <summary>Gets the entity's lock duration: read from the entity, or the option; <see langword="null"/> when neither was available.</summary>
    public TimeSpan? LockDuration { get; }

    /// <summary>Gets the lock the broker gave the messages of the first receive that returned any, measured on arrival; <see langword="null"/> before.</summary>
    internal TimeSpan? ObservedLockDuration => Volatile.Read(ref _observedLockTicks) is var ticks and >= 0 ? TimeSpan.FromTicks(ticks) : null;

    /// <summary>
    /// Gets the exception that stopped the source (missing rights, a session entity, a wrong lock duration), or
    /// <see langword="null"/>. A missing or disabled entity does not stop it: each receive fails, and the next waits
    /// for a backoff of 1 s doubling to 8 s, until the entity is there (<c>docs/azure-service-bus.md</c>, "Missing entities").
    /// </summary>
    public Exception? Fault => _fault;

    /// <inheritdoc />
    /// <remarks><see cref="MessagingSystemName"/>.</remarks>
    string IMessageSource.MessagingSystem => MessagingSystemName;

    /// <inheritdoc />
    /// <remarks>The entity's path (<see cref="ServiceBusEntity.Path"/>).</remarks>
    string? IMessageSource.DestinationName => Entity.Path;

    /// <summary>Receives one message (see <see cref="ReceiveBatchAsync(int, CancellationToken)"/>).</summary>
    /// <param name="cancellationToken">Cancels the receive, including its wait for a message.</param>
    /// <returns>The locked message, or <see langword="null"/> when none arrived within <see cref="ServiceBusSourceOptions.MaxWaitTime"/>.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    /// <exception cref="InvalidOperationException">The entity does not exist or is disabled (this receive; the next one tries again after a backoff), the credentials may not receive, or the lock duration is wrong (<see cref="Fault"/>).</exception>
    public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        var batch = await ReceiveBatchAsync(1, cancellationToken).ConfigureAwait(false);
        return batch.Count > 0 ? batch[0] : null;
    }

    /// <summary>
    /// Receives up to <paramref name="maxMessages"/> messages with one <see cref="ServiceBusReceiver.ReceiveMessagesAsync(int, TimeSpan?, CancellationToken)"/>,
    /// waiting up to <see cref="ServiceBusSourceOptions.MaxWaitTime"/> for the first. <paramref name="cancellationToken"/>
    /// cancels the call while it waits, as the SDK's own processor cancels its receive when it stops (a pump's stop
    /// cancels it, so that an idle pump stops at once rather than when the wait ends). The SDK withdraws the link's
    /// credit when its receive is canceled: a message that arrives afterwards stays available for the next receive,
    /// locked by nobody. After a receive that found the entity missing
    /// or disabled, the next one is sent only when the backoff has passed (1 s, doubling to 8 s; it waits for it).
    /// </summary>
    /// <param name="maxMessages">The most messages to return; at least 1.</param>
    /// <param name="cancellationToken">Cancels the receive, including its wait for a message.</param>
    /// <returns>The locked messages, in the order the broker sent them; none when none arrived within the wait.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxMessages"/> is zero or negative.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    /// <exception cref="InvalidOperationException">The entity does not exist or is disabled (this receive; the next one tries again after the backoff), the credentials may not receive, or the lock duration is wrong (<see cref="Fault"/>).</exception>
    public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessages);
        ThrowIfFaulted();
        cancellationToken.ThrowIfCancellationRequested();
        if (TakeDeferredReceived(maxMessages) is { } deferred)
        {
            return deferred;
        }

        await _entityRetry.WaitAsync(cancellationToken).ConfigureAwait(false);
        var sentAt = _clock.GetUtcNow();
        var managementLinkOpened = _managementLink.OpenAsync(); // alongside the first receive; see ManagementLink
        var received = await ReceiveFromEntityAsync(maxMessages, cancellationToken).ConfigureAwait(false);
        if (received is null)
        {
            return TakeDeferredReceived(maxMessages) ?? []; // cut short for deferred messages
        }

        if (received.Count == 0)
        {
            return [];
        }

        var answeredAt = _clock.GetUtcNow();
        await managementLinkOpened.ConfigureAwait(false);
        var leased = new ILeasedMessage[received.Count];
        for (var i = 0; i < leased.Length; i++)
        {
            leased[i] = new ServiceBusLeasedMessage(_receiver, received[i], Entity);
        }

        if (Interlocked.CompareExchange(ref _observedLockTicks, LockDurationCheck.Observe(received, answeredAt).Ticks, -1) == -1
            && LockDurationCheck.Verify(LockDuration, ObservedLockDuration!.Value, answeredAt - sentAt, _options.LockDurationTolerance, Entity) is { } wrong)
        {
            _fault = wrong;
            await ReleaseAsync(leased).ConfigureAwait(false);
            throw wrong;
        }

        return leased;
    }

    /// <summary>
    /// The SDK's receive, its failures mapped; <see langword="null"/> when deferred messages for the pump cut it short
    /// (<see cref="ReceiveDeferredAsync"/>): the SDK withdraws the link's credit, so nothing more was locked for it.
    /// </summary>
    private async Task<IReadOnlyList<ServiceBusReceivedMessage>?> ReceiveFromEntityAsync(int maxMessages, CancellationToken cancellationToken)
    {
        using var wake = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        Volatile.Write(ref _receiveWake, wake);
        try
        {
            if (!_deferredReceived.IsEmpty)
            {
                return null; // they came as the receive began
            }

            var received = await _receiver.ReceiveMessagesAsync(maxMessages, _options.MaxWaitTime, wake.Token).ConfigureAwait(false);
            _entityRetry.Succeeded();
            return received ?? [];
        }
        catch (OperationCanceledException) when (wake.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            return null;
        }
        catch (Exception ex) when (ServiceBusErrors.IsEntityUnavailable(ex))
        {
            // Not a fault: the entity may be created (again) or enabled while the source runs. The link could not
            // open, so the management link is opened again alongside the first receive that reaches the entity.
            _managementLink.Reset();
            throw ServiceBusErrors.EntityUnavailable(ex, Entity, _entityRetry.Failed());
        }
        catch (Exception ex) when (ServiceBusErrors.TranslateReceive(ex, Entity, sessions: false, cancellationToken) is { } translated)
        {
            if (translated is InvalidOperationException)
            {
                _fault = translated;
            }

#pragma warning disable MA0027 // not a rethrow: the mapped exception carries ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }
        finally
        {
            Interlocked.CompareExchange(ref _receiveWake, null, wake);
        }
    }

    /// <summary>
    /// Receives the deferred messages with these sequence numbers now (<see cref="ServiceBusReceiver.ReceiveDeferredMessagesAsync"/>,
    /// which locks them) and keeps them for the next receives, which hand them out before anything else, at most as many
    /// as each receive asks for. Their locks run from now: the pump renews them once a receive has handed them out.
    /// </summary>
    /// <returns>How many messages were received (all of them: the broker refuses the call when one is not deferred).</returns>
    internal async Task<int> ReceiveDeferredAsync(IReadOnlyList<long> sequenceNumbers, CancellationToken cancellationToken)
    {
        ThrowIfFaulted();
        var received = await _receiver.ReceiveDeferredMessagesAsync(sequenceNumbers, cancellationToken).ConfigureAwait(false);
        foreach (var message in received)
        {
            _deferredReceived.Enqueue(new ServiceBusLeasedMessage(_receiver, message, Entity));
        }

        if (received.Count > 0 && Volatile.Read(ref _receiveWake) is { } wake)
        {
            try
            {
                await wake.CancelAsync().ConfigureAwait(false); // the receive under way returns them now
            }
            catch (ObjectDisposedException)
            {
                // that receive has ended: the next one takes them first
            }
        }

        return received.Count;
    }

    /// <summary>Closes the receiver when the source created it (through <see cref="ServiceBusTransport"/>); a receiver you passed in stays yours.</summary>
    /// <returns>A task that completes when the receiver is closed.</returns>
    public async ValueTask DisposeAsync()
    {
        // Deferred messages received for the pump and never handed out: abandoned, so they are deferred again at once.
        var unseen = new List<ILeasedMessage>();
        while (_deferredReceived.TryDequeue(out var message))
        {
            unseen.Add(message);
        }

        if (unseen.Count > 0)
        {
            await ReleaseAsync([.. unseen]).ConfigureAwait(false);
        }

        if (_ownsReceiver)
        {
            await _receiver.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <inheritdoc />
    public override string ToString() => $"ServiceBusMessageSource of the {Entity}";

    /// <summary>Throws when <paramref name="receiver"/> cannot lease messages: ReceiveAndDelete mode, or closed.</summary>
    internal static void ThrowIfUnusable(ServiceBusReceiver receiver, ServiceBusEntity entity, string paramName)
    {
        if (receiver.ReceiveMode != ServiceBusReceiveMode.PeekLock)
        {
            throw new ArgumentException($"The receiver of the {entity} is in {receiver.ReceiveMode} mode: a message pump needs PeekLock, since a message deleted on receipt has no lock to renew and is lost if its handler fails.", paramName);
        }

        if (receiver.IsClosed)
        {
            throw new ArgumentException($"The receiver of the {entity} is closed.", paramName);
        }
    }

    /// <summary>The entity a receiver reads, from its path (<c>queue</c> or <c>topic/Subscriptions/subscription</c>).</summary>
    internal static ServiceBusEntity ParseEntity(ServiceBusReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        var path = receiver.EntityPath;
        if (string.IsNullOrWhiteSpace(path))
        {
            throw new ArgumentException("The receiver names no entity (its EntityPath is empty).", nameof(receiver));
        }

        var parts = path.Split('/');
        return parts.Length == 3 && string.Equals(parts[1], "Subscriptions", StringComparison.OrdinalIgnoreCase)
            ? ServiceBusEntity.Subscription(parts[0], parts[2])
            : ServiceBusEntity.Queue(path);
    }

    /// <summary>Up to <paramref name="maxMessages"/> of the deferred messages received for the pump, or <see langword="null"/> when none wait.</summary>
    private List<ILeasedMessage>? TakeDeferredReceived(int maxMessages)
    {
        List<ILeasedMessage>? taken = null;
        while (taken is not { } full || full.Count < maxMessages)
        {
            if (!_deferredReceived.TryDequeue(out var message))
            {
                break;
            }

            (taken ??= []).Add(message);
        }

        return taken;
    }

    private void ThrowIfFaulted()
    {
        var fault = _fault;
        if (fault is not null)
        {
            throw new InvalidOperationException($"{this} has stopped: {fault.Message}", fault);
        }
    }

    /// <summary>Abandons messages the caller will not see, all at once; failures are left to the locks' expiry.</summary>
    private static async Task ReleaseAsync(ILeasedMessage[] messages)
    {
        var calls = new Task[messages.Length];
        for (var i = 0; i < calls.Length; i++)
        {
            calls[i] = messages[i].AbandonAsync(CancellationToken.None);
        }

        foreach (var call in calls)
        {
            await call.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }
}
