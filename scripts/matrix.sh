#!/usr/bin/env bash
# make matrix: build tlbf and run its tests against several PostgreSQL
# versions, two at a time (MATRIX_JOBS).
#
#   scripts/matrix.sh                    every PostgreSQL at hand: the upstream
#                                        trees of $MATRIX_TARBALLS (default
#                                        ../shared/postgres) and every
#                                        /usr/lib/postgresql/*/bin/pg_config
#   scripts/matrix.sh PG_CONFIG...       those only (make matrix PG_CONFIGS=...);
#                                        a postgresql-*.tar.xz tree works too
#
# Each version gets a private copy of its PostgreSQL in $MATRIX_CACHE/postgres
# (default ${XDG_CACHE_HOME:-~/.cache}/tlbf; as root /var/cache/tlbf, which
# the postgres user can read): a tarball is unpacked there, an installed
# PostgreSQL (Debian's, PGDG's, any pg_config) copied there, both reused
# between runs and refreshed when their source changes.  tlbf is installed
# into that copy only, so the matrix never writes to /usr and never sees
# another checkout's build.  In a fresh copy of this tree, per version:
#   build      make COPT=-Werror (MATRIX_COPT): warnings fail
#   install    into the private copy, after removing any earlier tlbf there
#   regress    make installcheck on a throwaway cluster (library not preloaded)
#   preload    make installcheck-preload (REGRESS_PRELOAD and isolation)
#   tap        make tap, as the postgres user when run as root: every test
#              on a server with assertions, a subset elsewhere
#              (MATRIX_TAP_TESTS; MATRIX_TAP_ALL=1 runs all of them)
# and once, beside the versions, citus: scripts/citus.sh, the Citus tests
# (test/citus) on 15 and 17.2, each in a copy with Citus built in.
# MATRIX_STEPS chooses among regress, preload, tap and citus (default: all
# four; build and install always run).  A failed step does not stop the others
# (the build aside), nor the other versions.  Logs go to
# build/matrix/<version>/; a summary with the time of each version ends the
# run, which exits 1 if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
started=$(date +%s)

cache=$(scripts/cache_dir.sh)
tarballs=${MATRIX_TARBALLS-$repo/../shared/postgres}
copt=${MATRIX_COPT--Werror}
steps=" ${MATRIX_STEPS-regress preload tap citus} "
mkdir -p "$cache/postgres"
cache=$(cd "$cache" && pwd)

as_server_user=()
if [ "$(id -u)" -eq 0 ]; then
    as_server_user=(runuser -u postgres --)
    if ! "${as_server_user[@]}" test -r "$cache/postgres" -a -x "$cache/postgres"; then
        echo "matrix: the postgres user cannot read $cache/postgres; set MATRIX_CACHE elsewhere" >&2
        exit 1
    fi
fi

# One run at a time per cache: each installs into the copies there.
exec 9>"$cache/postgres/.lock"
if ! flock -n 9; then
    echo "matrix: another run is using $cache/postgres; waiting for it"
    flock 9
fi

# --- private copies of PostgreSQL --------------------------------------------

# Unpack an upstream tree (postgresql-17.2.tar.xz holds postgresql-17.2/)
# unless the cache already holds this very tarball's.  Prints its pg_config.
unpack() {
    local tarball=$1 name stamp
    name=$(basename "$tarball" .tar.xz)
    stamp="$(stat -c '%s %Y' "$tarball")"
    if [ ! -x "$cache/postgres/$name/bin/pg_config" ] ||
            [ "$(cat "$cache/postgres/$name.stamp" 2>/dev/null)" != "$stamp" ]; then
        echo "matrix: unpacking $tarball into $cache/postgres" >&2
        rm -rf "$cache/postgres/$name" "$cache/postgres/$name.stamp" "$cache/postgres/$name.partial"
        mkdir "$cache/postgres/$name.partial"
        tar -xJf "$tarball" -C "$cache/postgres/$name.partial"
        mv "$cache/postgres/$name.partial/$name" "$cache/postgres/$name"
        rmdir "$cache/postgres/$name.partial"
        echo "$stamp" >"$cache/postgres/$name.stamp"
    fi
    echo "$cache/postgres/$name/bin/pg_config"
}

# --- which versions ----------------------------------------------------------

# Why a pg_config cannot be tested, if it cannot (no PGXS, or no server).
unusable() {
    local p=$1 pgxs
    pgxs=$("$p" --pgxs 2>/dev/null) || { echo "it does not run"; return; }
    if [ ! -f "$pgxs" ]; then
        echo "it has no PGXS (the server development files: postgresql-server-dev-NN)"
    elif [ ! -x "$("$p" --bindir)/postgres" ]; then
        echo "it has no server (postgresql-NN)"
    fi
}

sources=()
if [ $# -gt 0 ]; then
    sources=("$@")
else
    if [ -n "$tarballs" ] && [ -d "$tarballs" ]; then
        for t in "$tarballs"/postgresql-*.tar.xz; do
            [ -f "$t" ] && sources+=("$t")
        done
    else
        echo "matrix: the upstream PostgreSQL trees are missing (no ${tarballs:-MATRIX_TARBALLS});" \
             "testing the PostgreSQL installed here only"
    fi
    for p in /usr/lib/postgresql/*/bin/pg_config; do
        [ -x "$p" ] || continue
        why=$(unusable "$p")
        if [ -z "$why" ]; then
            sources+=("$p")
        else
            echo "matrix: skipping $p: $why"
        fi
    done
fi
if [ ${#sources[@]} -eq 0 ]; then
    echo "matrix: no PostgreSQL to test: install postgresql-NN and postgresql-server-dev-NN, or name" \
         "pg_configs (make matrix PG_CONFIGS=\"/usr/lib/postgresql/17/bin/pg_config ...\")" >&2
    exit 1
fi

configs=()
for s in "${sources[@]}"; do
    case "$s" in
        *.tar.xz) configs+=("$(unpack "$s")") ;;
        *)
            if ! command -v "$s" >/dev/null; then
                echo "matrix: $s: no such pg_config" >&2
                exit 1
            fi
            why=$(unusable "$(command -v "$s")")
            if [ -n "$why" ]; then
                echo "matrix: $s: $why" >&2
                exit 1
            fi
            # an installed PostgreSQL: a private copy (scripts/private_copy.sh)
            configs+=("$(MATRIX_CACHE=$cache scripts/private_copy.sh "$(command -v "$s")")") ;;
    esac
done
# oldest major version first
mapfile -t configs < <(for c in "${configs[@]}"; do
    printf '%s\t%s\n' "$("$c" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')" "$c"
done | sort -n -s -k1,1 | cut -f2)

# --- per version ---------------------------------------------------------------
logs=$repo/build/matrix
mkdir -p "$logs"
rm -rf "$logs"/*/ "$logs"/citus.*

# TAP tests: all of them where the server has assertions (17.2 here; make
# test runs all of them on Debian's 15), elsewhere those that reach what
# differs between server versions (docs/tests.md, "The version matrix").
tap_some=${MATRIX_TAP_TESTS-test/t/002_worker.pl test/t/003_shared.pl test/t/004_dump_restore.pl
    test/t/010_security.pl test/t/013_shared_lifecycle.pl test/t/014_standby.pl
    test/t/027_key_types.pl test/t/028_dedup_prepared_crash.pl}
tap_all=${MATRIX_TAP_ALL:-0}

# Was this server built with assertions (--enable-cassert)?
has_assertions() {
    [[ $("$1" --configure) == *--enable-cassert* ]]
}

# run NAME LOGFILE command...: the step's output goes to its log, a line
# saying how it went to stdout (the version's report)
step() {
    local name=$1 log=$2 t0 rc=0
    shift 2
    t0=$(date +%s)
    "$@" >"$log" 2>&1 || rc=$?
    step_time=$(( $(date +%s) - t0 ))
    if [ $rc -eq 0 ]; then
        printf '   %-8s ok      %4ss\n' "$name" "$step_time"
    else
        printf '   %-8s FAILED  %4ss  (%s)\n' "$name" "$step_time" "$log"
        tail -n 40 "$log" | sed 's/^/      | /'
        { echo "$label $name:"; failure_lines "$log" | sed 's/^/    /'; } >>"$failures"
    fi
    return $rc
}

# The lines of a failed step's log that say what failed (prove's failed
# tests and their got/expected, pg_regress's failed tests), repeated after
# the summary: CI shows the end of the output.
failure_lines() {
    grep -E -e '^#   Failed test|^#   at |^#  +(got|expected)|Dubious|Failed [0-9]+/[0-9]+|Bail out|No subtests' \
            -e ' FAILED|^not ok|failed \(ignored\)|tests? failed|error:|Error [0-9]' "$1" | head -n 20 || true
}

# Test one version in a fresh copy of the tree (no objects of another
# version, no results).  Its report goes to $logs/<version>/report, its
# line of the summary to .../summary, what failed to .../failures.
test_version() {
    local pg_config=$1 version out t0 work status tap_tests
    version=$("$pg_config" --version | sed 's/^PostgreSQL //')
    label=${version%% *}
    out=$logs/$label
    failures=$out/failures
    mkdir -p "$out"
    t0=$(date +%s)
    tap_tests=""
    if [ "$tap_all" != 1 ] && ! has_assertions "$pg_config"; then
        tap_tests=$tap_some
    fi

    work=$(mktemp -d /tmp/tlbf-matrix.XXXXXX)
    tar --exclude=./build --exclude=./results --exclude=./tmp_check --exclude=./output_iso \
        --exclude=./output_preload --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
        -cf - . | tar -xf - -C "$work"

    status=0
    (
        cd "$work"
        echo "== PostgreSQL $version ($pg_config)"
        export PG_CONFIG=$pg_config
        export LD_LIBRARY_PATH="$("$pg_config" --libdir)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        step build "$out/build.log" make -j"$(nproc)" COPT="$copt" || exit 64
        # whatever an earlier run installed there goes first: a stale
        # script would hide a missing one
        step install "$out/install.log" bash -c '
            share=$("$PG_CONFIG" --sharedir)/extension lib=$("$PG_CONFIG" --pkglibdir)
            rm -rf "$share"/tlbf.control "$share"/tlbf--*.sql "$lib"/tlbf.so \
                   "$lib"/bitcode/tlbf "$lib"/bitcode/tlbf.index.bc
            make install' || exit 65
        rc=0
        if [[ $steps == *" regress "* ]]; then
            step regress "$out/regress.log" scripts/cluster.sh make installcheck || rc=$((rc | 1))
            if [ -f regression.diffs ]; then cp regression.diffs "$out/"; fi
        else
            rc=$((rc | 8))
        fi
        if [[ $steps == *" preload "* ]]; then
            step preload "$out/preload.log" make installcheck-preload || rc=$((rc | 2))
            if [ -f output_iso/regression.diffs ]; then cp output_iso/regression.diffs "$out/isolation.diffs"; fi
            if [ -f output_preload/regression.diffs ]; then cp output_preload/regression.diffs "$out/preload.diffs"; fi
        else
            rc=$((rc | 16))
        fi
        if [[ $steps == *" tap "* ]]; then
            if [ -n "$tap_tests" ]; then
                echo "   (TAP: $(echo $tap_tests | wc -w) of $(ls test/t/*.pl | wc -l) tests, MATRIX_TAP_ALL=1 for all)"
                step tap "$out/tap.log" scripts/as_test_user.sh make tap PROVE_FLAGS=--timer \
                    PROVE_TESTS="$(echo $tap_tests)" || rc=$((rc | 4))
            else
                step tap "$out/tap.log" scripts/as_test_user.sh make tap PROVE_FLAGS=--timer || rc=$((rc | 4))
            fi
            if [ -d tmp_check/log ]; then cp -r tmp_check/log "$out/tap-logs"; fi
        else
            rc=$((rc | 32))
        fi
        exit $rc
    ) >"$out/report" 2>&1 || status=$?
    rm -rf "$work"
    case $status in
        64) results=(FAILED - - - -) ;;
        65) results=(ok FAILED - - -) ;;
        *) results=(ok ok)
           # bit 1, 2, 4: the step failed; bit 8, 16, 32: it was not run
           for bit in 1 2 4; do
               if (( status & bit )); then results+=(FAILED)
               elif (( status & (bit << 3) )); then results+=(-)
               else results+=(ok); fi
           done ;;
    esac
    printf '%-12s %-7s %-7s %-7s %-7s %-7s %5ss\n' "$label" "${results[@]}" $(( $(date +%s) - t0 )) \
        >"$out/summary"
    cat "$out/report"
    (( status & 7 || status >= 64 )) && return 1
    return 0
}

# The Citus tests, on PostgreSQL 15 (Citus 13.2.2) and 17.2 (Citus 14.0.1);
# without ../shared/citus they say they were skipped.
test_citus() {
    label=citus
    failures=$logs/citus.failures
    local result
    if MATRIX_CACHE=$cache step citus "$logs/citus.log" scripts/citus.sh >"$logs/citus.report"; then
        result=ok
        # a run without the kit passes, but must not read as tested
        if grep -q 'SKIPPED' "$logs/citus.log"; then
            result="SKIPPED (see above)"
        fi
        grep -E 'SKIPPED|^== ' "$logs/citus.log" | sed 's/^/   /' >>"$logs/citus.report" || true
    else
        result=FAILED
    fi
    echo "$result" >"$logs/citus.result"
    { echo "== Citus"; cat "$logs/citus.report"; }
    [ "$result" != FAILED ]
}

# MATRIX_JOBS at a time (default 2: most of a test's time is spent waiting
# for servers, so two keep two cores busy), the longest first: Citus (it
# builds Citus the first time), then servers with assertions.
jobs=${MATRIX_JOBS:-2}
ordered=()
for c in "${configs[@]}"; do
    if has_assertions "$c"; then ordered+=("$c"); fi
done
for c in "${configs[@]}"; do
    if ! has_assertions "$c"; then ordered+=("$c"); fi
done
tasks=()
[[ $steps == *" citus "* ]] && tasks+=(citus)
tasks+=("${ordered[@]}")

failed=0
running=0
for task in "${tasks[@]}"; do
    while [ "$running" -ge "$jobs" ]; do
        wait -n || failed=1
        running=$((running - 1))
    done
    if [ "$task" = citus ]; then
        test_citus &
    else
        test_version "$task" &
    fi
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
    wait -n || failed=1
    running=$((running - 1))
done

echo
echo "== matrix: $(date -u +%Y-%m-%d), ${#configs[@]} versions, $jobs at a time, $(( $(date +%s) - started ))s in all"
printf '%-12s %-7s %-7s %-7s %-7s %-7s %6s\n' version build install regress preload tap time
for c in "${configs[@]}"; do
    label=$("$c" --version | sed 's/^PostgreSQL //; s/ .*//')
    cat "$logs/$label/summary"
done
if [[ $steps == *" citus "* ]]; then
    echo "citus (15 and 17.2, coordinator and two workers): $(cat "$logs/citus.result")"
fi
if cat "$logs"/*/failures "$logs/citus.failures" 2>/dev/null | grep -q .; then
    echo "what failed:"
    cat "$logs"/*/failures "$logs/citus.failures" 2>/dev/null
fi
echo "(logs in $logs)"
exit $failed
