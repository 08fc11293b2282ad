#!/usr/bin/env bash
# Runs the whole test suite N times, as CI does (`dotnet test PriorityAsync.sln -c Release` with a throwaway
# PostgreSQL server, see .ci/run), optionally on a machine made busy by .ci/under-load.sh, and reports what failed:
#
#   .ci/stress.sh N [--under-load] [-- extra dotnet test arguments]
#   .ci/stress.sh 5 --under-load
#   .ci/stress.sh 3 -- --filter FullyQualifiedName~Lifecycle
#
# Each run's results (one .trx per test project) and its console log are kept in artifacts/stress/<UTC time>/run-<i>/
# (artifacts/ is ignored by git). At the end it prints, per run, the counts (passed/failed/skipped), the highest
# 1-minute load average sampled every 5 s during the run, and every failing test with the seed its output printed
# (a randomised test prints "seed N" or PRIORITYASYNC_SWARM_SEED=N and replays from it). Exits 1 when any run had a
# failing test or a failing `dotnet test`, 0 otherwise. Needs bash, coreutils and python3 besides the SDK.
set -euo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

usage() { echo "usage: $0 N [--under-load] [-- extra dotnet test arguments]" >&2; exit 2; }

[[ $# -ge 1 ]] || usage
runs="$1"
shift
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "N (the number of runs) must be a whole number of at least 1, got '$runs'" >&2; exit 2; }
wrap=()
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --under-load) wrap=(.ci/under-load.sh); shift ;;
        --) shift; extra=("$@"); break ;;
        *) usage ;;
    esac
done

out="artifacts/stress/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"

export CI="${CI:-true}"
PRIORITYASYNC_PG_DIR="$(mktemp -d -t priorityasync-pg.XXXXXX)"
export PRIORITYASYNC_PG_DIR
sampler=""
cleanup() {
    if [[ -n "$sampler" ]]; then kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true; fi
    .ci/postgres.sh stop || true
}
trap cleanup EXIT
eval "$(.ci/postgres.sh start)"

failed_any=0
for ((i = 1; i <= runs; i++)); do
    dir="$out/run-$i"
    mkdir -p "$dir"
    echo "::: stress run $i of $runs${wrap:+ (under load)} -> $dir"
    # The highest 1-minute load average seen while the run lasts, sampled every 5 s.
    ( trap 'exit 0' TERM; while :; do cut -d' ' -f1 /proc/loadavg >>"$dir/load.txt"; sleep 5; done ) &
    sampler=$!
    status=0
    "${wrap[@]}" dotnet test PriorityAsync.sln -c Release \
        --logger "trx;LogFilePrefix=run-$i" --results-directory "$dir" "${extra[@]}" >"$dir/console.log" 2>&1 || status=$?
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    sampler=""
    echo "$status" >"$dir/exit-code"
    tail -n 5 "$dir/console.log"
    [[ "$status" == 0 ]] || failed_any=1
done

echo "::: summary ($out)"
python3 - "$out" <<'PY' || failed_any=1
import glob, os, re, sys
import xml.etree.ElementTree as ET

root = sys.argv[1]
ns = {"t": "http://microsoft.com/schemas/VisualStudio/TeamTest/2010"}
seed_re = re.compile(r"(?:PRIORITYASYNC_SWARM_SEED=(\d+))|(?:\bseed\b\W{0,3}(-?\d+))", re.IGNORECASE)
any_failure = False
runs = sorted(glob.glob(os.path.join(root, "run-*")), key=lambda d: int(d.rsplit("-", 1)[1]))
for run in runs:
    counts = {"Passed": 0, "Failed": 0, "NotExecuted": 0}
    failures = []
    trx_files = sorted(glob.glob(os.path.join(run, "*.trx")))
    for trx in trx_files:
        tree = ET.parse(trx)
        for result in tree.getroot().iterfind(".//t:UnitTestResult", ns):
            outcome = result.get("outcome", "")
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome == "Failed":
                text = " ".join(e.text or "" for e in result.iter() if e.tag.endswith(("Message", "StdOut", "StackTrace")))
                seeds = sorted({a or b for a, b in seed_re.findall(text)})
                failures.append((result.get("testName", "?"), seeds))
    loads = []
    try:
        loads = [float(x) for x in open(os.path.join(run, "load.txt")).read().split()]
    except (OSError, ValueError):
        pass
    exit_code = open(os.path.join(run, "exit-code")).read().strip() if os.path.exists(os.path.join(run, "exit-code")) else "?"
    load = f"load avg max {max(loads):.2f}, mean {sum(loads) / len(loads):.2f}" if loads else "load not sampled"
    print(f"{os.path.basename(run)}: passed {counts['Passed']}, failed {counts['Failed']}, skipped {counts['NotExecuted']}, "
          f"{len(trx_files)} projects, dotnet test exit {exit_code}; {load}")
    for name, seeds in failures:
        print(f"  FAILED {name}" + (f"  (seed {', '.join(seeds)})" if seeds else ""))
    if counts["Failed"] or exit_code != "0" or not trx_files:
        any_failure = True
sys.exit(1 if any_failure else 0)
PY
exit "$failed_any"
