#!/usr/bin/env bash
# Run the Citus tests (test/citus/*.pl: a coordinator and two workers) on
# each PostgreSQL named, by default Debian's 15 (with Citus 13.2.2) and the
# matrix's 17.2 tree (Citus 14.0.1, assertions on):
#   scripts/citus.sh [pg_config ...]
# Citus comes from the kit in ../shared/citus (CITUS_KIT): its build.sh
# compiles Citus into a copy of the PostgreSQL in $MATRIX_CACHE/citus
# (3-4 minutes the first time, then cached); tlbf is installed into that
# copy and the tests run there.  Without the kit the tests are skipped,
# and say so.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

kit=${CITUS_KIT:-$repo/../shared/citus}
if [ ! -x "$kit/build.sh" ]; then
    echo "citus: SKIPPED: no Citus kit at $kit (build.sh of ../shared/citus); the Citus tests did not run"
    exit 0
fi
cache=$(scripts/cache_dir.sh)
mkdir -p "$cache/citus"

configs=("$@")
if [ ${#configs[@]} -eq 0 ]; then
    for p in /usr/lib/postgresql/15/bin/pg_config "$cache/postgres/postgresql-17.2/bin/pg_config"; do
        if [ -x "$p" ]; then
            configs+=("$p")
        else
            echo "citus: SKIPPED for $p: not there (make matrix unpacks the 17.2 tree)"
        fi
    done
fi

# Debian's PostgreSQL 15 was built with GSSAPI: Citus needs its headers.
if [ -x /usr/lib/postgresql/15/bin/pg_config ]; then
    scripts/deps.sh libkrb5-dev
fi

failed=0
for pg_config in "${configs[@]}"; do
    version=$("$pg_config" --version)
    echo "== Citus tests on $version"
    log=$(mktemp /tmp/tlbf-citus-build.XXXXXX)
    if ! "$kit/build.sh" "$pg_config" "$cache/citus" >"$log" 2>&1; then
        tail -n 20 "$log"
        echo "citus: FAILED: could not build Citus for $version"
        failed=1
        continue
    fi
    # the copy's pg_config, from build.sh's "bin:" line
    bindir=$(awk '$1 == "bin:" { print $2; exit }' "$log")
    rm -f "$log"
    if [ ! -x "$bindir/pg_config" ]; then
        echo "citus: FAILED: build.sh named no bin directory for $version"
        failed=1
        continue
    fi
    work=$(mktemp -d /tmp/tlbf-citus.XXXXXX)
    tar --exclude=./build --exclude=./results --exclude=./tmp_check --exclude='*.o' \
        --exclude='*.so' --exclude='*.bc' -cf - . | tar -xf - -C "$work"
    status=0
    (
        cd "$work"
        export PG_CONFIG=$bindir/pg_config
        make -s -j"$(nproc)" >/dev/null && make -s install >/dev/null &&
            scripts/as_test_user.sh make -s citus-tap PROVE_FLAGS=--verbose
    ) || status=$?
    rm -rf "$work"
    if [ $status -ne 0 ]; then
        echo "citus: FAILED on $version"
        failed=1
    fi
done
exit $failed
