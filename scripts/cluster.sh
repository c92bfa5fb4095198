#!/usr/bin/env bash
# Run a command against a throwaway PostgreSQL cluster:
#   scripts/cluster.sh [--preload] command [args...]
# The PostgreSQL is $PG_CONFIG's, by default the one the Makefile builds
# against (make pg-config).
# The cluster lives in a temporary directory, listens on a free port (and a
# socket in that directory), and is stopped and removed when the command
# ends, also on failure.  The command gets PGHOST, PGPORT, PGUSER and
# PGDATABASE.  As root, the server runs as the postgres user.  Lines in
# $TLBF_CLUSTER_CONF are added to postgresql.conf.
set -euo pipefail

pg_config=${PG_CONFIG:-$(make -s --no-print-directory -C "$(dirname "$0")/.." pg-config)}
bindir=$("$pg_config" --bindir)
# A relocated install tree's programs (upstream builds unpacked elsewhere)
# may otherwise load an older libpq from the system.
export LD_LIBRARY_PATH="$("$pg_config" --libdir)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
preload=""
if [ "${1:-}" = "--preload" ]; then
    preload="tlbf"
    shift
fi

as_server_user=()
if [ "$(id -u)" -eq 0 ]; then
    # from /, which the server user can enter wherever the clone lives
    as_server_user=(runuser -u postgres -- env -C /)
fi

free_port() {
    local port
    for port in $(seq 54321 54999); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    echo "no free port" >&2
    exit 1
}

dir=$(mktemp -d /tmp/tlbf-cluster.XXXXXX)
[ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
port=$(free_port)

stop_cluster() {
    "${as_server_user[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
    if [ -n "${KEEP_CLUSTER_LOG:-}" ]; then cp "$dir/log" "$KEEP_CLUSTER_LOG" || true; fi
    rm -rf "$dir"
}
trap stop_cluster EXIT

"${as_server_user[@]}" "$bindir/initdb" -D "$dir/data" -U postgres -A trust \
    --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; exit 1; }
cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = 'localhost'
unix_socket_directories = '$dir'
fsync = off
max_worker_processes = 16
max_parallel_workers_per_gather = 2
shared_preload_libraries = '$preload'
${TLBF_CLUSTER_CONF:-}
CONF
"${as_server_user[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null \
    || { cat "$dir/log"; exit 1; }

export PGHOST="$dir" PGPORT="$port" PGUSER=postgres PGDATABASE=postgres
export TLBF_CLUSTER_LOG="$dir/log"
"$@"
