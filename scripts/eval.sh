#!/usr/bin/env bash
# make eval: the Time-limited Bloom Filter paper's experiments and the
# comparison with other sliding-window filters at equal memory, from the
# core library; CSV and PNG files in docs/eval (see test/eval/README.md).
#
#   scripts/eval.sh            the full run, over the committed docs/eval
#   scripts/eval.sh --smoke    a much smaller run (well under a minute) into a
#                              temporary directory, removed afterwards unless
#                              EVAL_KEEP=1; fails if a program fails or a
#                              structure that promises no live false
#                              negatives reports one
#
# The web log is data/wc98_day6_sample200k.sorted.csv.gz, shipped with the
# repository (data/README.md), or $TLBF_EVAL_LOG.  The full run needs it;
# the smoke run skips the web-log part, with a warning, when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=()
case "${1:-}" in
    "") ;;
    --smoke) smoke=(--smoke) ;;
    *) echo "usage: scripts/eval.sh [--smoke]" >&2; exit 2 ;;
esac
started=$(date +%s)

scripts/deps.sh gnuplot-nox

# --- build (the flags of the build/bench rule in the Makefile) -------------
cflags=(-std=gnu11 -O2 -g -Wall -fno-strict-aliasing -fwrapv -Isrc/core -Itest)
core=(src/core/*.c)
mkdir -p build/eval
build() {
    local out=$1
    shift
    gcc "${cflags[@]}" -o "build/eval/$out" "$@" "${core[@]}" -lm
}
build paper_structure test/eval/paper_structure.c
build paper_fpr test/eval/paper_fpr.c
build window_compare test/eval/window_compare.c test/eval/window_summary.c test/eval/compare.c \
    test/eval/streams.c test/eval/last_seen.c test/eval/structures.c \
    test/eval/counting_bf.c test/eval/stable_bf.c test/eval/guarded_epoch.c \
    test/eval/continuous_bf.c test/eval/rotating_bf.c test/eval/tlbf_window.c

# --- where the results go ---------------------------------------------------
log=${TLBF_EVAL_LOG:-data/wc98_day6_sample200k.sorted.csv.gz}
if [ ${#smoke[@]} -gt 0 ]; then
    out=$(mktemp -d /tmp/tlbf-eval.XXXXXX)
    if [ "${EVAL_KEEP:-0}" = 1 ]; then
        echo "smoke results kept in $out"
    else
        trap 'rm -rf "$out"' EXIT
    fi
    if [ ! -r "$log" ]; then
        echo "warning: web log $log not found: the smoke run skips it" >&2
        log=""
    fi
else
    out=docs/eval
    mkdir -p "$out"
    if [ ! -r "$log" ]; then
        echo "the web log $log is missing (set TLBF_EVAL_LOG)" >&2
        exit 1
    fi
fi

# --- run ---------------------------------------------------------------------
# The two paper harnesses time nothing, so they share the two cores; the
# comparison, which measures throughput, runs alone afterwards.
failed=0
status() {
    case $1 in
        0) ;;
        3) echo "FAILED: $2 reported live false negatives" >&2; failed=1 ;;
        *) echo "FAILED: $2 exited with $1" >&2; failed=1 ;;
    esac
}
echo "== TLBF paper: structure, bits per element, no false negatives (Figures 1-3, Table 2)"
build/eval/paper_structure "${smoke[@]}" --out "$out" & structure_pid=$!
echo "== TLBF paper: false-positive rate (Figures 4-5)"
build/eval/paper_fpr "${smoke[@]}" --out "$out" & fpr_pid=$!
rc=0; wait $structure_pid || rc=$?; status $rc paper_structure
rc=0; wait $fpr_pid || rc=$?; status $rc paper_fpr
echo "== comparison at equal memory (guarded-epoch paper's Table 1, and more)"
rc=0; build/eval/window_compare "${smoke[@]}" --out "$out" --log "$log" || rc=$?
status $rc window_compare

echo "== plots"
gnuplot -e "dir='$out'" test/eval/paper_figures.gp || status $? paper_figures.gp
gnuplot -e "dir='$out'" test/eval/window_figures.gp || status $? window_figures.gp

elapsed=$(( $(date +%s) - started ))
if [ $failed -ne 0 ]; then
    echo "== eval FAILED after ${elapsed}s" >&2
    exit 1
fi
if [ ${#smoke[@]} -eq 0 ]; then
    echo "results in $out:"
    ls "$out" | sed 's/^/  /'
fi
echo "== eval done in ${elapsed}s"
