namespace PriorityAsync.Tests.Shared;

/// <summary>Finds the repository's root (the folder holding PriorityAsync.sln) from the test binaries; linked into every test project that reads docs.</summary>
internal static class RepositoryRoot
{
    public static string Find()
    {
        var directory = new DirectoryInfo(AppContext.BaseDirectory);
        while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "PriorityAsync.sln")))
        {
            directory = directory.Parent;
        }

        return directory?.FullName ?? throw new InvalidOperationException("PriorityAsync.sln not found above the test binaries.");
    }
}
