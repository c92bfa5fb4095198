#!/usr/bin/env bash
# make eval: the Time-limited Bloom Filter paper's experiments, the
# comparison with other sliding-window filters at equal memory and the
# inference experiment (posterior, penalties, last seen), from the core
# library; CSV and PNG files in docs/eval (see test/eval/README.md).
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
structures=(test/eval/compare.c test/eval/streams.c test/eval/last_seen.c test/eval/structures.c
    test/eval/counting_bf.c test/eval/stable_bf.c test/eval/guarded_epoch.c
    test/eval/continuous_bf.c test/eval/rotating_bf.c test/eval/tlbf_window.c test/eval/tb_window.c)
# the programs build side by side; any failure stops the run
builds=()
build paper_structure test/eval/paper_structure.c & builds+=($!)
build paper_fpr test/eval/paper_fpr.c & builds+=($!)
build window_compare test/eval/window_compare.c test/eval/window_summary.c "${structures[@]}" & builds+=($!)
build inference test/eval/inference.c test/eval/inference_queries.c test/eval/inference_measure.c \
    test/eval/inference_report.c "${structures[@]}" & builds+=($!)
for pid in "${builds[@]}"; do
    wait "$pid" || { echo "== eval FAILED: a program did not build" >&2; exit 1; }
done

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
# The two paper harnesses and the inference experiment time nothing, so they
# share the two cores; the comparison, which measures throughput, runs alone
# afterwards.
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
echo "== inference: posterior calibration, penalties, last seen"
build/eval/inference "${smoke[@]}" --out "$out" --log "$log" & inference_pid=$!
rc=0; wait $structure_pid || rc=$?; status $rc paper_structure
rc=0; wait $fpr_pid || rc=$?; status $rc paper_fpr
rc=0; wait $inference_pid || rc=$?; status $rc inference
echo "== comparison at equal memory (guarded-epoch paper's Table 1, and more)"
rc=0; build/eval/window_compare "${smoke[@]}" --out "$out" --log "$log" || rc=$?
status $rc window_compare

echo "== plots"
plots=()
for figures in paper_figures window_figures inference_figures; do
    gnuplot -e "dir='$out'" test/eval/$figures.gp & plots+=($!)
done
for figures in paper_figures window_figures inference_figures; do
    rc=0; wait "${plots[0]}" || rc=$?; plots=("${plots[@]:1}")
    [ $rc -eq 0 ] || status $rc $figures.gp
done

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
