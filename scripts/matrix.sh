#!/usr/bin/env bash
# make matrix: build tlbf and run its tests against several PostgreSQL
# versions, one after another.
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
#   tap        make tap, as the postgres user when run as root
# and once, after every version, citus: scripts/citus.sh, the Citus tests
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
summary=()
failed=0
rm -f "$logs/failures"

# run LOGFILE command...: the step's output goes to its log
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
        { echo "$label $name:"; failure_lines "$log" | sed 's/^/    /'; } >>"$logs/failures"
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

for pg_config in "${configs[@]}"; do
    version=$("$pg_config" --version | sed 's/^PostgreSQL //')
    label=${version%% *}
    out=$logs/$label
    rm -rf "$out"
    mkdir -p "$out"
    echo "== PostgreSQL $version ($pg_config)"
    t0=$(date +%s)

    # a fresh copy of the tree: no objects of another version, no results
    work=$(mktemp -d /tmp/tlbf-matrix.XXXXXX)
    tar --exclude=./build --exclude=./results --exclude=./tmp_check --exclude=./output_iso \
        --exclude=./output_preload --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
        -cf - . | tar -xf - -C "$work"

    status=0
    (
        cd "$work"
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
            step tap "$out/tap.log" scripts/as_test_user.sh make tap || rc=$((rc | 4))
            if [ -d tmp_check/log ]; then cp -r tmp_check/log "$out/tap-logs"; fi
        else
            rc=$((rc | 32))
        fi
        exit $rc
    ) || status=$?
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
    (( status & 7 || status >= 64 )) && failed=1
    summary+=("$(printf '%-12s %-7s %-7s %-7s %-7s %-7s %5ss' "$label" "${results[@]}" $(( $(date +%s) - t0 )))")
done

# The Citus tests, on PostgreSQL 15 (Citus 13.2.2) and 17.2 (Citus 14.0.1),
# unless MATRIX_STEPS leaves them out; without ../shared/citus they say
# they were skipped.
citus_result=-
if [[ $steps == *" citus "* ]]; then
    echo "== Citus"
    if MATRIX_CACHE=$cache step citus "$logs/citus.log" scripts/citus.sh; then
        citus_result=ok
        # a run without the kit passes, but must not read as tested
        if grep -q 'SKIPPED' "$logs/citus.log"; then
            citus_result="SKIPPED (see above)"
        fi
        grep -E 'SKIPPED|^== ' "$logs/citus.log" | sed 's/^/   /' || true
    else
        citus_result=FAILED
        failed=1
    fi
fi

echo
echo "== matrix: $(date -u +%Y-%m-%d), ${#configs[@]} versions, $(( $(date +%s) - started ))s in all"
printf '%-12s %-7s %-7s %-7s %-7s %-7s %6s\n' version build install regress preload tap time
printf '%s\n' "${summary[@]}"
echo "citus (15 and 17.2, coordinator and two workers): $citus_result"
if [ -s "$logs/failures" ]; then
    echo "what failed:"
    cat "$logs/failures"
fi
echo "(logs in $logs)"
exit $failed
