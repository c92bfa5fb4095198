#!/usr/bin/env bash
# The build notices what its objects were compiled against: pointed at
# another PostgreSQL (make PG_CONFIG=... install in a tree built for
# another version), or after a header changed, it compiles them again
# instead of installing stale objects.  Checked in a copy of the tree on
# one object, with a pg_config that reports another version.
set -euo pipefail
cd "$(dirname "$0")/.."

pg_config=$(make -s --no-print-directory pg-config)
copy=$(mktemp -d /tmp/tlbf-rebuild.XXXXXX)
trap 'rm -rf "$copy"' EXIT
tar --exclude=./build --exclude=./results --exclude=./tmp_check -cf - . | tar -xf - -C "$copy"
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

[ "$(compiles "$pg_config")" = 1 ] || fail "a fresh tree does not compile src/times.o"
[ "$(compiles "$pg_config")" = 0 ] || fail "an unchanged tree compiles src/times.o again"
[ "$(compiles "$copy/other_pg_config")" = 1 ] || fail "another PostgreSQL does not recompile src/times.o"
[ "$(compiles "$pg_config")" = 1 ] || fail "back to the first PostgreSQL does not recompile src/times.o"
touch "$copy/src/core/tlbf_format.h"
[ "$(compiles "$pg_config")" = 1 ] || fail "a changed header does not recompile src/times.o"
echo "rebuilds: for another PostgreSQL and after a header changed, not otherwise"
