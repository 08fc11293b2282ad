using System.Text;

namespace PriorityAsync.PublicApi.Tests;

/// <summary>
/// A checked-in snapshot, <c>&lt;name&gt;.verified.txt</c> in this project's <c>Snapshots</c> folder, compared
/// with a freshly generated text. No diff tool is ever opened and nothing waits for input: a mismatch writes
/// <c>&lt;name&gt;.received.txt</c> beside the baseline and fails with a line diff. With
/// <c>PRIORITYASYNC_ACCEPT_API=1</c> (never honoured when <c>CI=true</c>) a mismatch overwrites the baseline instead.
/// </summary>
internal static class ApprovedFile
{
    /// <summary>The environment variable that accepts a changed snapshot as the new baseline.</summary>
    public const string AcceptVariable = "PRIORITYASYNC_ACCEPT_API";

    /// <summary>Compares <paramref name="received"/> with the baseline called <paramref name="name"/>; throws on a mismatch.</summary>
    public static void Verify(string name, string received)
    {
        var folder = Path.Combine(RepositoryRoot.Find(), "tests", "PublicApi.Tests", "Snapshots");
        var verifiedPath = Path.Combine(folder, name + ".verified.txt");
        var receivedPath = Path.Combine(folder, name + ".received.txt");
        received = Normalize(received);
        var verified = File.Exists(verifiedPath) ? Normalize(File.ReadAllText(verifiedPath)) : null;
        if (verified == received)
        {
            File.Delete(receivedPath);
            return;
        }

        var accept = Environment.GetEnvironmentVariable(AcceptVariable) == "1"
            && !string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);
        if (accept)
        {
            Directory.CreateDirectory(folder);
            File.WriteAllText(verifiedPath, received);
            File.Delete(receivedPath);
            return;
        }

        File.WriteAllText(receivedPath, received);
        var message = new StringBuilder()
            .Append(verified is null ? $"No baseline {verifiedPath}." : $"The public API differs from {verifiedPath}.")
            .Append("\nIf the change is intended, accept it: move ").Append(Path.GetFileName(receivedPath))
            .Append(" over ").Append(Path.GetFileName(verifiedPath)).Append(", or run the tests with ")
            .Append(AcceptVariable).Append("=1; then review and commit the Snapshots folder.\n")
            .Append("--- verified\n+++ received\n")
            .Append(LineDiff(verified ?? string.Empty, received));
        throw new Xunit.Sdk.XunitException(message.ToString());
    }

    private static string Normalize(string text) => text.Replace("\r\n", "\n", StringComparison.Ordinal);

    /// <summary>The lines only in <paramref name="before"/> (<c>-</c>) and only in <paramref name="after"/> (<c>+</c>), in order, by longest common subsequence.</summary>
    internal static string LineDiff(string before, string after)
    {
        var a = before.Split('\n');
        var b = after.Split('\n');
        var common = new int[a.Length + 1, b.Length + 1];
        for (var i = a.Length - 1; i >= 0; i--)
        {
            for (var j = b.Length - 1; j >= 0; j--)
            {
                common[i, j] = a[i] == b[j] ? common[i + 1, j + 1] + 1 : Math.Max(common[i + 1, j], common[i, j + 1]);
            }
        }

        var diff = new StringBuilder();
        int x = 0, y = 0;
        while (x < a.Length || y < b.Length)
        {
            if (x < a.Length && y < b.Length && a[x] == b[y])
            {
                x++;
                y++;
            }
            else if (x < a.Length && (y == b.Length || common[x + 1, y] >= common[x, y + 1]))
            {
                diff.Append($"-{x + 1,5}: ").Append(a[x++]).Append('\n');
            }
            else
            {
                diff.Append($"+{y + 1,5}: ").Append(b[y++]).Append('\n');
            }
        }

        return diff.ToString();
    }
}
