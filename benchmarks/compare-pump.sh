#!/usr/bin/env bash
# Pump throughput before and after in ONE BenchmarkDotNet run (PumpBeforeAfterBenchmarks): packs PriorityAsync and
# PriorityAsync.MessagePump at a baseline commit under the version 0.0.0-before<commit> into artifacts/baseline-feed
# (git-ignored), then runs the suite with PUMP_BASELINE_VERSION set, so BenchmarkDotNet builds a "before" runner on
# those packages and an "after" runner on the current projects and prints both rows with Ratio and Alloc Ratio.
#
#   benchmarks/compare-pump.sh [--base COMMIT] [BenchmarkDotNet arguments...]
#
# COMMIT defaults to 337f420 (before the per-message cost work). The baseline source is checked out in a detached
# worktree under ${TMPDIR:-/tmp}; it and the packages are reused when they already exist.
set -euo pipefail

base=337f420
if [[ "${1:-}" == "--base" ]]; then
    [[ $# -ge 2 ]] || { echo "compare-pump.sh: --base needs a commit" >&2; exit 2; }
    base=$2
    shift 2
fi

repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse --verify --short "$base^{commit}") \
    || { echo "compare-pump.sh: --base '$base' is not a commit of this repository" >&2; exit 2; }
version="0.0.0-before$commit"
feed="$repo/artifacts/baseline-feed"
source="${TMPDIR:-/tmp}/priorityasync-baseline-$commit"

if [[ ! -f "$feed/PriorityAsync.$version.nupkg" || ! -f "$feed/PriorityAsync.MessagePump.$version.nupkg" ]]; then
    if [[ ! -d "$source" ]]; then
        git -C "$repo" worktree add --detach "$source" "$commit"
    fi
    for project in src/PriorityAsync/PriorityAsync.csproj src/MessagePump/PriorityAsync.MessagePump.csproj; do
        dotnet pack "$source/$project" -c Release -p:Version="$version" -o "$feed"
    done
fi

export PUMP_BASELINE_VERSION="$version"
cd "$repo"
exec dotnet run -c Release --project benchmarks/PriorityAsync.Benchmarks -- --filter '*PumpBeforeAfterBenchmarks*' "$@"
