#!/usr/bin/env bash
# A throwaway PostgreSQL server for the PostgreSQL transport's tests, on 127.0.0.1 only, a private free port and a
# private socket directory; durable commits (fsync and synchronous_commit stay on).
#
#   .ci/postgres.sh start   # initdb + start; prints the export line of PRIORITYASYNC_POSTGRES
#   .ci/postgres.sh env     # prints the export line again:  eval "$(.ci/postgres.sh env)"
#   .ci/postgres.sh stop    # stops the server and removes the cluster (safe to call twice)
#
# State lives in $PRIORITYASYNC_PG_DIR (default: /tmp/priorityasync-pg-$UID). As root, initdb and the server run as
# the `postgres` user (initdb refuses root); as any other user they run as that user. The PostgreSQL server binaries
# are looked up in $PG_BIN, then /usr/lib/postgresql/*/bin, then PATH; when none is found and we are root, the
# `postgresql` package is installed with apt-get.
set -euo pipefail

dir="${PRIORITYASYNC_PG_DIR:-/tmp/priorityasync-pg-$(id -u)}"

find_bin() {
    if [[ -n "${PG_BIN:-}" && -x "$PG_BIN/initdb" ]]; then echo "$PG_BIN"; return; fi
    local candidate
    candidate="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [[ -n "$candidate" && -x "$candidate/initdb" ]]; then echo "$candidate"; return; fi
    if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
    return 1
}

as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

port_in_use() {
    if command -v ss >/dev/null 2>&1; then
        ss -Htln "sport = :$1" 2>/dev/null | grep -q .
    else
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
    fi
}

free_port() {
    local port
    for _ in $(seq 1 200); do
        port=$(( 20000 + RANDOM % 40000 ))
        if ! port_in_use "$port"; then echo "$port"; return; fi
    done
    echo "no free port found" >&2
    return 1
}

print_env() {
    [[ -f "$dir/port" ]] || { echo "no server: run '$0 start' first" >&2; exit 1; }
    echo "export PRIORITYASYNC_POSTGRES='Host=127.0.0.1;Port=$(cat "$dir/port");Username=postgres;Password=$(cat "$dir/password");Database=postgres'"
}

start() {
    if [[ -f "$dir/port" ]]; then echo "a server is already set up in $dir ('$0 stop' first)" >&2; exit 1; fi
    local bin
    if ! bin="$(find_bin)"; then
        if [[ "$(id -u)" != 0 ]]; then echo "PostgreSQL server binaries not found; install the postgresql package" >&2; exit 1; fi
        echo "::: installing PostgreSQL (apt-get)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
        bin="$(find_bin)"
    fi

    mkdir -p "$dir"
    chmod 700 "$dir"
    [[ "$(id -u)" == 0 ]] && chown postgres: "$dir"
    local port password
    port="$(free_port)"
    password="$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"
    as_owner bash -c "umask 077; printf '%s\n' '$password' > '$dir/pwfile'"
    as_owner mkdir -p "$dir/socket"
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pwfile" --auth=scram-sha-256 --encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner rm -f "$dir/pwfile"
    # Loopback only, private port and socket directory; fsync and synchronous_commit keep their durable defaults.
    # A port found free can be taken before the server binds it: then try another one.
    local attempt
    for attempt in 1 2 3; do
        if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
            -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir/socket -c max_connections=300 -c fsync=on -c synchronous_commit=on" >&2; then
            break
        fi
        if [[ "$attempt" == 3 ]]; then cat "$dir/server.log" >&2; exit 1; fi
        port="$(free_port)"
    done
    echo "$bin" >"$dir/bin"
    echo "$password" >"$dir/password"
    echo "$port" >"$dir/port"
    echo "::: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (cluster $dir/data)" >&2
    print_env
}

stop() {
    [[ -d "$dir" ]] || return 0
    if [[ -f "$dir/bin" && -f "$dir/data/postmaster.pid" ]]; then
        as_owner "$(cat "$dir/bin")/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >&2 || true
    fi
    rm -rf "$dir"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    env) print_env ;;
    *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
