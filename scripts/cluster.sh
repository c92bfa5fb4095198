#!/usr/bin/env bash
# Run a command against a throwaway PostgreSQL cluster:
#   scripts/cluster.sh [--preload] command [args...]
# The PostgreSQL is $PG_CONFIG's, by default the one the Makefile builds
# against (make pg-config).
# The cluster lives in a temporary directory, listens on a free port (and a
# socket in that directory; a port taken before the server binds it is
# given up for the next), and is stopped and removed when the command
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

# Ports are chosen from here, starting at a random one: runs side by side
# (make test and make matrix) then seldom try the same port.
first_port=54321
last_port=54999

# Is anything listening on this port?
listening() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

dir=$(mktemp -d /tmp/tlbf-cluster.XXXXXX)
[ "$(id -u)" -eq 0 ] && chown postgres: "$dir"

stop_cluster() {
    "${as_server_user[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
    if [ -n "${KEEP_CLUSTER_LOG:-}" ]; then cp "$dir/log" "$KEEP_CLUSTER_LOG" || true; fi
    rm -rf "$dir"
}
trap stop_cluster EXIT

"${as_server_user[@]}" "$bindir/initdb" -D "$dir/data" -U postgres -A trust \
    --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; exit 1; }
cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = 'localhost'
# (English, for the check of a port taken meanwhile below)
lc_messages = 'C'
unix_socket_directories = '$dir'
fsync = off
max_worker_processes = 16
max_parallel_workers_per_gather = 2
max_prepared_transactions = 10
shared_preload_libraries = '$preload'
${TLBF_CLUSTER_CONF:-}
CONF

# A port nothing listens on may still be taken before the server binds it
# (another cluster that chose it at the same time): the server then fails
# to bind it, and starts again on the next port.  A server that bound only
# one of localhost's addresses goes too: clients of the other would reach
# someone else's server.
port=$(( first_port + RANDOM % (last_port - first_port + 1) ))
started=""
for _ in $(seq 50); do
    port=$(( port < last_port ? port + 1 : first_port ))
    listening "$port" && continue
    rm -f "$dir/log"
    if "${as_server_user[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -o "-p $port" -w start \
            >"$dir/pg_ctl.out" 2>&1; then
        if ! grep -q 'could not bind' "$dir/log"; then
            started=yes
            break
        fi
        "${as_server_user[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    elif ! grep -q 'could not bind' "$dir/log"; then
        cat "$dir/pg_ctl.out" "$dir/log"
        exit 1
    fi
done
if [ -z "$started" ]; then
    echo "cluster.sh: no free port between $first_port and $last_port after 50 tries:" >&2
    cat "$dir/log" >&2 2>/dev/null || true
    exit 1
fi

export PGHOST="$dir" PGPORT="$port" PGUSER=postgres PGDATABASE=postgres
export TLBF_CLUSTER_LOG="$dir/log"
"$@"
