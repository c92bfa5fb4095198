#!/usr/bin/env bash
# Copy an installed PostgreSQL into the cache, and print the copy's pg_config:
#   scripts/private_copy.sh PG_CONFIG
# Each directory PGXS and the server use (bindir, pkglibdir, sharedir,
# includedir-server) goes to the same path under the copy's root,
# $cache/postgres/copy<bindir with / as ->: PostgreSQL finds its directories
# relative to its programs, so the copy is a PostgreSQL of its own, which
# tlbf can be installed into without writing to /usr.  (The libraries in
# --libdir stay shared: on Debian that is /usr/lib.)  A copy is reused, and
# made again when the server's version or binary changes.  A pg_config
# that is already a copy's is printed as it is.
# $cache is scripts/cache_dir.sh's ($MATRIX_CACHE); the caller holds
# $cache/postgres/.lock (make matrix and make bench take it), since it
# installs into the copy.
set -euo pipefail
pg_config=$(command -v "$1") || { echo "private_copy: $1: no such pg_config" >&2; exit 1; }
cd "$(dirname "$0")/.."

cache=$(scripts/cache_dir.sh)
mkdir -p "$cache/postgres"
cache=$(cd "$cache" && pwd)

bindir=$("$pg_config" --bindir)
case "$bindir/" in
    "$cache/postgres/"*) echo "$bindir/pg_config"; exit 0 ;;   # already one
esac
root="$cache/postgres/copy$(echo "$bindir" | tr / -)"
stamp="$("$pg_config" --version) $(stat -c '%s %Y' "$bindir/postgres")"
if [ ! -x "$root$bindir/pg_config" ] || [ "$(cat "$root.stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "copying the PostgreSQL of $pg_config into $root" >&2
    rm -rf "$root" "$root.stamp"
    for dir in "$bindir" "$("$pg_config" --pkglibdir)" "$("$pg_config" --sharedir)" \
               "$("$pg_config" --includedir-server)"; do
        mkdir -p "$root$dir"
        cp -a "$dir/." "$root$dir/"
    done
    echo "$stamp" >"$root.stamp"
fi
echo "$root$bindir/pg_config"
