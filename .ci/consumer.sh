#!/usr/bin/env bash
# Proves a user can install the packages: packs the six shipped packages into artifacts/consumer-feed, checks what
# each contains, then builds and runs tests/PackageConsumer (a console app outside PriorityAsync.sln, restoring from
# that folder plus the default package sources: its nuget.config) and publishes it with NativeAOT and runs the binary.
# Then the docs (docs/index.md, "Code samples"): README.md's first C# block becomes the Program.cs of a new console
# app (dotnet new console, in a temporary folder) on the PriorityAsync package, is built with warnings as errors and
# run, and must print the output README.md shows under it; and tests/DocsCompile compiles every C# block of README.md
# and docs/*.md against the packages, runs the whole programs and checks the excerpts against their files.
#
#   .ci/consumer.sh          # called by .ci/run after the tests; runs alone too (only the .NET SDK needed, plus clang)
#
# Stale packages: the packages get a version no earlier run used (VersionPrefix-consumer.<UTC time>.<pid>), so the
# global package cache can never answer with an older build of the same version; that version's folders are removed
# from the global package cache on exit, so runs do not pile up there. (A private NUGET_PACKAGES would also be fresh,
# but would download Microsoft.Extensions.*, Npgsql and the NativeAOT compiler again on every run.)
#
# NativeAOT needs clang (and zlib headers): `clang` on PATH, else the newest clang-<N> found is passed as
# CppCompilerAndLinker; when there is none and we are root, `clang zlib1g-dev` are installed with apt-get.
# The app builds with TreatWarningsAsErrors, so any trim or AOT warning from the libraries fails the publish.
# With PRIORITYASYNC_POSTGRES set (.ci/run exports it) the app also pumps three messages through a PostgreSQL queue.
# Both runs (JIT and NativeAOT) also pump three messages through the Service Bus transport against the in-process
# ServiceBusTestBroker, and must say so.
set -euo pipefail
cd "$(dirname "$0")/.."

feed=artifacts/consumer-feed
aot_out=artifacts/consumer-aot
prefix="$(dotnet msbuild src/PriorityAsync/PriorityAsync.csproj -getProperty:VersionPrefix)"
suffix="consumer.$(date -u +%Y%m%d%H%M%S).$$"
version="$prefix-$suffix"
global_packages="$(dotnet nuget locals global-packages --list | sed 's/^global-packages: //')"

readme_app="$(mktemp -d -t priorityasync-readme.XXXXXX)"
analyzer_app="$(mktemp -d -t priorityasync-analyzers.XXXXXX)"

cleanup() {
    rm -rf "$readme_app" "$analyzer_app"
    local id
    for id in priorityasync priorityasync.messagepump priorityasync.messagepump.hosting priorityasync.messagepump.postgresql \
        priorityasync.messagepump.azureservicebus priorityasync.messagepump.azureservicebus.testing; do
        rm -rf "${global_packages:?}/$id/$version"
        rmdir "$global_packages/$id" 2>/dev/null || true
    done
}
trap cleanup EXIT

echo "::: pack $version"
rm -rf "$feed" "$aot_out"
dotnet pack packages.slnf -c Release -o "$feed" --version-suffix "$suffix" -warnaserror

echo "::: package contents"
list_zip() {
    if command -v unzip >/dev/null 2>&1; then
        unzip -Z1 "$1"
    else
        python3 -m zipfile -l "$1" | awk 'NR > 1 { print $1 }'
    fi
}
for id in PriorityAsync PriorityAsync.MessagePump PriorityAsync.MessagePump.Hosting PriorityAsync.MessagePump.PostgreSql \
    PriorityAsync.MessagePump.AzureServiceBus PriorityAsync.MessagePump.AzureServiceBus.Testing; do
    package="$feed/$id.$version.nupkg"
    files="$(list_zip "$package")"
    echo "$id.$version.nupkg:" $files
    for expected in README.md LICENSE "lib/net10.0/$id.dll" "lib/net10.0/$id.xml" "$id.nuspec"; do
        grep -qxF "$expected" <<<"$files" || { echo "$package lacks $expected" >&2; exit 1; }
    done
    # The analyzers of the one rule ship inside the core package (docs/analyzers.md).
    if [[ $id == PriorityAsync ]]; then
        grep -qxF "analyzers/dotnet/cs/PriorityAsync.Analyzers.dll" <<<"$files" || { echo "$package lacks its analyzers" >&2; exit 1; }
    fi
    [[ -f "$feed/$id.$version.snupkg" ]] || { echo "no symbol package $id.$version.snupkg" >&2; exit 1; }
    symbols="$(list_zip "$feed/$id.$version.snupkg")"
    grep -qxF "lib/net10.0/$id.pdb" <<<"$symbols" || { echo "$id.$version.snupkg lacks its pdb" >&2; exit 1; }
done

echo "::: sibling packages pinned to each other's exact version"
# docs/design.md "Packages": the siblings share internals, so each depends on the others at exactly its own version
# ("[x.y.z]", src/Directory.Build.targets), never "x.y.z" (which NuGet reads as ">= x.y.z").
nuspec_of() {
    if command -v unzip >/dev/null 2>&1; then
        unzip -p "$1" "$2.nuspec"
    else
        python3 -c 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())' "$1" "$2.nuspec"
    fi
}
for package in "$feed"/*."$version".nupkg; do
    id="$(basename "$package" ".$version.nupkg")"
    siblings="$(nuspec_of "$package" "$id" | grep -oE '<dependency id="PriorityAsync[^"]*" version="[^"]*"' || true)"
    while IFS= read -r dependency; do
        [[ -z "$dependency" ]] && continue
        [[ "$dependency" == *"version=\"[$version]\""* ]] \
            || { echo "$id.$version.nupkg: a sibling dependency is not pinned to [$version]: $dependency" >&2; exit 1; }
    done <<<"$siblings"
done

echo "::: the consumer app carries the quick starts as the docs show them"
# First C# block of a page, and the app's code, compared without indentation, blank lines and using directives.
normalize() { sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//; /^using /d; /^$/d'; }
first_csharp_block() { awk '/^```csharp/ { inside = 1; next } /^```/ { if (inside) exit } inside' "$1" | normalize; }
app_code="$(normalize < tests/QuickStart/QuickStartSample.cs)"
for page in docs/message-pump.md; do
    [[ "$app_code" == *"$(first_csharp_block "$page")"* ]] \
        || { echo "tests/QuickStart/QuickStartSample.cs (compiled into the consumer app) no longer holds the quick start of $page" >&2; exit 1; }
done

echo "::: consumer app (JIT)"
dotnet build tests/PackageConsumer -c Release -p:PriorityAsyncVersion="$version"
jit_output="$(timeout 120 dotnet tests/PackageConsumer/bin/Release/net10.0/PackageConsumer.dll)"
printf '%s\n' "$jit_output"
grep -qF "Service Bus transport: 3 of 3 messages completed once each on the test broker" <<<"$jit_output" \
    || { echo "the consumer app's JIT run did not complete the Service Bus round trip" >&2; exit 1; }

echo "::: consumer app (NativeAOT)"
aot_args=()
if ! command -v clang >/dev/null 2>&1; then
    versioned="$(compgen -c clang- | grep -xE 'clang-[0-9]+' | sort -t- -k2 -n | tail -n 1 || true)"
    if [[ -n "$versioned" ]]; then
        aot_args+=("-p:CppCompilerAndLinker=$versioned")
    elif [[ "$(id -u)" == 0 ]]; then
        echo "::: installing clang and zlib1g-dev (apt-get)"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang zlib1g-dev
    else
        echo "NativeAOT needs clang; install clang and zlib1g-dev" >&2
        exit 1
    fi
fi
case "$(uname -m)" in
    x86_64) rid=linux-x64 ;;
    aarch64 | arm64) rid=linux-arm64 ;;
    *) echo "no NativeAOT runtime identifier for $(uname -m)" >&2; exit 1 ;;
esac
dotnet publish tests/PackageConsumer -c Release -r "$rid" -p:PublishAot=true -p:PriorityAsyncVersion="$version" \
    -o "$aot_out" "${aot_args[@]}"
aot_output="$(timeout 120 "$aot_out/PackageConsumer")"
printf '%s\n' "$aot_output"
grep -qF "Service Bus transport: 3 of 3 messages completed once each on the test broker" <<<"$aot_output" \
    || { echo "the consumer app's NativeAOT binary did not complete the Service Bus round trip" >&2; exit 1; }

echo "::: README.md's first C# block, as Program.cs of a new console app"
# The first ```csharp block, and the first ```text block after it: the output the README shows.
readme_block() { awk -v lang="$1" '/^```csharp/ { csharp++ } csharp && $0 == "```" lang { inside = 1; next } inside && /^```/ { exit } inside' README.md; }
dotnet new console --output "$readme_app" --name ReadmeQuickStart --framework net10.0 --no-restore >/dev/null
cat > "$readme_app/nuget.config" <<EOF
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="priorityasync-local" value="$PWD/$feed" />
  </packageSources>
</configuration>
EOF
dotnet add "$readme_app" package PriorityAsync --version "$version"
readme_block csharp > "$readme_app/Program.cs"
expected="$(readme_block text)"
[[ -s "$readme_app/Program.cs" && -n "$expected" ]] || { echo "README.md has no C# block followed by a text block of its output" >&2; exit 1; }
dotnet build "$readme_app" -c Release -warnaserror
actual="$(timeout 120 dotnet "$readme_app/bin/Release/net10.0/ReadmeQuickStart.dll")"
printf '%s\n' "$actual"
[[ "$actual" == "$expected" ]] || { printf 'README.md says its first program prints:\n%s\nbut it printed:\n%s\n' "$expected" "$actual" >&2; exit 1; }

echo "::: the analyzers reach a consumer of PriorityAsync.MessagePump alone (tests/AnalyzerConsumer)"
dotnet new console --output "$analyzer_app" --name AnalyzerConsumer --framework net10.0 --no-restore >/dev/null
cp "$readme_app/nuget.config" "$analyzer_app/nuget.config"
cp tests/AnalyzerConsumer/*.cs "$analyzer_app/"
dotnet add "$analyzer_app" package PriorityAsync.MessagePump --version "$version"
analyzer_log="$(dotnet build "$analyzer_app" -c Release --no-incremental 2>&1)" || { printf '%s\n' "$analyzer_log"; echo "the analyzer consumer app did not build" >&2; exit 1; }
for rule in PA0001 PA0002 PA0003 PA0004; do
    grep -qE "Bad\.cs\([0-9]+,[0-9]+\): warning $rule:" <<<"$analyzer_log" \
        || { printf '%s\n' "$analyzer_log"; echo "$rule was not reported on tests/AnalyzerConsumer/Bad.cs" >&2; exit 1; }
done
if grep -qE "Good\.cs\([0-9]+,[0-9]+\): warning PA" <<<"$analyzer_log"; then
    printf '%s\n' "$analyzer_log"; echo "a rule was reported on tests/AnalyzerConsumer/Good.cs, which follows them" >&2; exit 1
fi
echo "analyzers: $(grep -oE "Bad\.cs\([0-9]+,[0-9]+\): warning PA[0-9]+" <<<"$analyzer_log" | sort -u | wc -l) reports on Bad.cs (PA0001-PA0004 each at least once), none on Good.cs"

echo "::: every C# block of README.md and docs/*.md against the packages (tests/DocsCompile)"
dotnet build tests/DocsCompile -c Release -p:PriorityAsyncVersion="$version"
timeout 900 dotnet tests/DocsCompile/bin/Release/net10.0/DocsCompile.dll "$PWD"
