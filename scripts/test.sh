#!/usr/bin/env bash
# make test: install what is missing, build and install the extension, then
# run the core's C unit tests (plain and sanitized), the SQL regression and
# isolation tests against a throwaway cluster, the fuzz and evaluation smoke
# runs and the TAP tests; check META.json first and the Debian package last.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's time, printed as it ends and again at the end (CI has a time
# budget: docs/tests.md says where it goes).
timings=""
started=$SECONDS
step_title=""
step_start=$SECONDS
step() {
    step_done
    step_title=$1
    step_start=$SECONDS
    echo "== $1"
}
step_done() {
    if [ -n "$step_title" ]; then
        local took=$((SECONDS - step_start))
        echo "   (${took} s)"
        timings+=$(printf '%5d s  %s' "$took" "$step_title")$'\n'
    fi
    step_title=""
}

step "what is missing is installed"
scripts/deps.sh

step "META.json, LICENSE and the changelogs against tlbf.control"
scripts/test_meta.sh

step "the layers of docs/server.md: the SQL functions reach shared memory through the store"
scripts/check_layers.sh

step "build and install"
scripts/build.sh

step "the build compiles again for another PostgreSQL or a changed header"
scripts/test_rebuild.sh

# The core's unit tests need no server and use one core each, plain and
# sanitized: both run beside the SQL tests, which mostly wait for their
# servers; their output follows those.
mkdir -p build
unit_pids=()
(echo "== C unit tests of the core"; make -s unit-run) >build/unit-tests.log 2>&1 &
unit_pids+=($!)
(echo "== the same, core built with AddressSanitizer and UndefinedBehaviorSanitizer"
 make -s unit-sanitized) >build/unit-tests-sanitized.log 2>&1 &
unit_pids+=($!)
trap 'kill "${unit_pids[@]}" 2>/dev/null || true' EXIT

step "SQL regression tests (pg_regress; library not preloaded)"
if ! scripts/cluster.sh make -s installcheck; then
    [ -f regression.diffs ] && cat regression.diffs
    exit 1
fi

step "tests that need the preloaded library (pg_regress and isolation; worker off)"
if ! make -s installcheck-preload; then
    for f in output_preload/regression.diffs output_iso/regression.diffs; do
        [ -f "$f" ] && cat "$f"
    done
    exit 1
fi

step "every document's SQL examples (each in a new database) and links"
scripts/cluster.sh --preload /usr/bin/python3 scripts/test_docs.py

step "C unit tests of the core, plain and sanitized (run beside the SQL tests)"
unit_rc=0
wait "${unit_pids[0]}" || unit_rc=1
cat build/unit-tests.log
wait "${unit_pids[1]}" || unit_rc=1
cat build/unit-tests-sanitized.log
if [ "$unit_rc" -ne 0 ]; then
    echo "the unit tests failed" >&2
    exit 1
fi

step "fuzz targets of the core: saved crashing inputs, then a short run"
scripts/fuzz.sh --smoke

step "evaluation harness, smoke run"
scripts/eval.sh --smoke

step "TAP tests (multi-node, worker, shared filters, dump and restore, load, server-side security)"
# (the one heavy TAP test, a 505 MB value through text, runs here only)
# two at a time (each starts its own clusters on free ports), timed
TLBF_LARGE_VALUES=1 scripts/as_test_user.sh make -s tap PROVE_FLAGS="--timer -j2"

# Last: installing the package replaces the files of the source build that
# every test above used.  The test puts them back when it removes the
# package, but even if that failed, no other test would have seen them.
step "Debian package: built, installed with apt, checked in fresh clusters, removed"
scripts/test_deb.sh
step_done
printf '%s' "$timings"
echo "== all tests passed in $((SECONDS - started)) s"
