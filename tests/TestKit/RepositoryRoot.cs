namespace PriorityAsync.TestKit;

/// <summary>Finds the repository's root (the folder holding PriorityAsync.sln) from the test binaries, for the tests that read docs and sources.</summary>
public static class RepositoryRoot
{
    /// <summary>Returns the repository's root folder; throws when no folder above the test binaries holds PriorityAsync.sln.</summary>
    /// <returns>The full path of the root folder.</returns>
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
