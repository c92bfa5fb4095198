#!/usr/bin/env bash
# The build notices what its objects were compiled against: pointed at
# another PostgreSQL (make PG_CONFIG=... install in a tree built for
# another version), or after a header changed, it compiles them again
# instead of installing stale objects.  Checked in a copy of the tree on
# one object, with a pg_config that reports another version.
#
# make compares modification times, which the file system keeps only to
# its clock's tick (4 ms here, a second on some): a file written in the
# same tick as the object is not newer than it.  So before each change
# that must make the object stale, the script waits until a file written
# now is newer than the object, rather than counting on time to have
# passed since it was compiled.
set -euo pipefail
cd "$(dirname "$0")/.."

pg_config=$(make -s --no-print-directory pg-config)
copy=$(mktemp -d /tmp/tlbf-rebuild.XXXXXX)
trap 'rm -rf "$copy"' EXIT
# no objects: a tree built here must not count as compiled in the copy
tar --exclude=./build --exclude=./results --exclude=./tmp_check --exclude='*.o' \
    --exclude='*.so' --exclude='*.bc' -cf - . | tar -xf - -C "$copy"
cat >"$copy/other_pg_config" <<SH
#!/bin/sh
[ "\$1" = --version ] && { echo "PostgreSQL 99.0"; exit 0; }
exec "$pg_config" "\$@"
SH
chmod +x "$copy/other_pg_config"

compiles() {
    make -C "$copy" PG_CONFIG="$1" src/times.o 2>&1 | grep -c -- '-c -o src/times.o' || true
}
fail() { echo "FAILED: $*" >&2; exit 1; }

# Return once a file written now gets a later modification time than
# src/times.o (within a tick of the file system's clock).
past_the_object() {
    local probe="$copy/build/clock-probe"
    mkdir -p "$copy/build"
    for _ in $(seq 1000); do
        touch "$probe"
        if [ "$probe" -nt "$copy/src/times.o" ]; then
            rm -f "$probe"
            return
        fi
        sleep 0.01
    done
    fail "the file system's clock did not pass src/times.o's modification time in 10 s"
}

[ "$(compiles "$pg_config")" = 1 ] || fail "a fresh tree does not compile src/times.o"
[ "$(compiles "$pg_config")" = 0 ] || fail "an unchanged tree compiles src/times.o again"
# (the next two rewrite build/postgres.stamp, which must be newer than the object)
past_the_object
[ "$(compiles "$copy/other_pg_config")" = 1 ] || fail "another PostgreSQL does not recompile src/times.o"
past_the_object
[ "$(compiles "$pg_config")" = 1 ] || fail "back to the first PostgreSQL does not recompile src/times.o"
past_the_object
touch "$copy/src/core/tlbf_format.h"
[ "$(compiles "$pg_config")" = 1 ] || fail "a changed header does not recompile src/times.o"
echo "rebuilds: for another PostgreSQL and after a header changed, not otherwise"
