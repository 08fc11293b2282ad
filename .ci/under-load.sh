#!/usr/bin/env bash
# Runs a command on a machine made busy on purpose, the way CI finds it right after a submission (another build
# beside the tests, load 4+ on 2 cores):
#
#   .ci/under-load.sh <command> [args...]
#   .ci/under-load.sh dotnet test tests/PriorityAsync.Tests -c Release
#
# Beside the command it starts
#   - CPU burners: twice as many busy threads as cores (UNDER_LOAD_BURNERS overrides), at normal priority, and
#   - allocation churn: a small python3 process that allocates and frees memory all the time (64 MiB at most,
#     UNDER_LOAD_CHURN_MIB overrides; 0 turns it off), so the page allocator and memory bandwidth are busy too.
# They are stopped when the command ends, whatever it did (exit, failure, Ctrl-C, TERM): no orphan is left. The script
# exits with the command's status. Only bash, coreutils and python3 are used (a fresh Debian machine with the SDK).
# It prints the load average before and after to stderr, so a log shows how busy the machine was.
set -uo pipefail

if [[ $# -eq 0 ]]; then
    echo "usage: $0 <command> [args...]" >&2
    exit 2
fi

cores="$(nproc 2>/dev/null || echo 2)"
burners="${UNDER_LOAD_BURNERS:-$((cores * 2))}"
churn_mib="${UNDER_LOAD_CHURN_MIB:-64}"
if ! [[ "$burners" =~ ^[0-9]+$ ]]; then echo "UNDER_LOAD_BURNERS must be a whole number, got '$burners'" >&2; exit 2; fi
if ! [[ "$churn_mib" =~ ^[0-9]+$ ]]; then echo "UNDER_LOAD_CHURN_MIB must be a whole number, got '$churn_mib'" >&2; exit 2; fi

pids=()

stop_load() {
    local pid
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    pids=()
}

cmd_pid=""

# INT/TERM sent to this script alone: pass it on to the command's whole process group (dotnet test starts vstest and a
# test host below it), wait for it, stop the load, leave with 128 + signal.
on_signal() {
    if [[ -n "$cmd_pid" ]]; then
        kill "-$1" -- "-$cmd_pid" 2>/dev/null || kill "-$1" "$cmd_pid" 2>/dev/null || true
        wait "$cmd_pid" 2>/dev/null || true
    fi
    stop_load
    exit "$2"
}

trap 'stop_load' EXIT
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM

# A burner is a subshell spinning on shell arithmetic: no fork per iteration, one full core while it is scheduled.
for ((i = 0; i < burners; i++)); do
    ( trap 'exit 0' TERM; n=0; while :; do n=$(( (n + 1) & 1048575 )); done ) &
    pids+=("$!")
done

if (( churn_mib > 0 )); then
    python3 - "$churn_mib" <<'PY' &
import signal, sys
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
limit = int(sys.argv[1]) * 1024 * 1024
held, size, i = [], 0, 0
while True:
    block = bytearray(256 * 1024 + (i % 7) * 65536)   # 256-640 KiB, touched so the pages are really mapped
    block[::4096] = b"\x01" * len(block[::4096])
    held.append(block)
    size += len(block)
    i += 1
    while size > limit:
        size -= len(held.pop(0))
PY
    pids+=("$!")
fi

echo "under-load: $burners CPU burners on $cores cores, ${churn_mib} MiB allocation churn; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# In the background (stdin passed on explicitly), so that `wait` returns when a signal arrives and the trap runs; in a
# process group of its own (setsid, from util-linux), so that a signal reaches everything the command started.
setsid "$@" <&0 &
cmd_pid=$!
wait "$cmd_pid"
status=$?
cmd_pid=""
echo "under-load: command exited $status; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
stop_load
exit "$status"
