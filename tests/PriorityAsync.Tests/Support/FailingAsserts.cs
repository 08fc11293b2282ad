using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace PriorityAsync.Tests.Support;

/// <summary>
/// Makes a failed <see cref="Debug.Assert(bool, string)"/> of the library (its invariants, checked in Debug builds)
/// fail the run visibly: the default listener would show a dialog or end the test host without saying which test.
/// The assert throws <see cref="InvariantBrokenException"/> instead: on the test's thread the test fails with the
/// assert's message; on a scheduler's own thread (a worker, the timer thread) the exception is unhandled and ends
/// the test run with the message and the stack on stderr.
/// </summary>
internal static class FailingAsserts
{
    [ModuleInitializer]
    [SuppressMessage("Usage", "CA2255:The 'ModuleInitializer' attribute should not be used in libraries", Justification = "A test assembly: the listener must be in place before the first test runs library code, whichever test that is.")]
    internal static void Install()
    {
        Trace.Listeners.Clear();
        Trace.Listeners.Add(new ThrowingListener());
    }

    /// <summary>A trace listener that turns every failed assert into an exception and ignores other output.</summary>
    private sealed class ThrowingListener : TraceListener
    {
        public override void Fail(string? message, string? detailMessage) =>
            throw new InvariantBrokenException($"Debug.Assert failed: {message} {detailMessage}".TrimEnd());

        public override void Write(string? message)
        {
        }

        public override void WriteLine(string? message)
        {
        }
    }
}

/// <summary>A <see cref="Debug.Assert(bool, string)"/> of the library failed (see <see cref="FailingAsserts"/>).</summary>
[SuppressMessage("Design", "CA1064:Exceptions should be public", Justification = "Thrown and seen only inside this test assembly.")]
internal sealed class InvariantBrokenException(string message) : Exception(message);
