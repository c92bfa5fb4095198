#!/usr/bin/env bash
# make fuzz: libFuzzer targets of the core (test/fuzz/README.md).
#
#   scripts/fuzz.sh SECONDS   fuzz each target for SECONDS seconds
#   scripts/fuzz.sh --smoke   the whole set in about a minute (for make test)
#
# Installs clang and its runtime if missing, builds the targets into
# build/fuzz, generates their seed corpora (build/fuzz/corpus), replays the
# saved crashing inputs of test/fuzz/regressions, then fuzzes the targets,
# as many at a time as there are cores.  New coverage accumulates in
# build/fuzz/work; a crashing input is saved in build/fuzz/crashes/<target>/
# and its report in build/fuzz/logs/<target>.log.  Prints execs and execs/s
# per target, and exits non-zero if a regression input or the fuzzing
# crashed (a failed check, a sanitizer report, a leak or a timeout).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(fuzz_text fuzz_binary fuzz_deserialize fuzz_union fuzz_operations fuzz_format3)
jobs=$(nproc 2>/dev/null || echo 1)
case "${1:-}" in
    # 60 s of fuzzing in all, whatever the number of cores
    --smoke) seconds=$((60 / ((${#targets[@]} + jobs - 1) / jobs))) ;;
    '' | *[!0-9]* | 0*) echo "usage: scripts/fuzz.sh SECONDS | --smoke" >&2; exit 2 ;;
    *) seconds=$1 ;;
esac
started=$(date +%s)

scripts/deps.sh clang libclang-rt-14-dev

out=build/fuzz
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
pg_lib=$("$pg_config" --pkglibdir)
pg_include=$("$pg_config" --includedir-server)
# fuzz_text decodes with PostgreSQL's own base64 (libpgcommon, static)
pg_libs=("$pg_lib/libpgcommon.a" "$pg_lib/libpgport.a")
for lib in "${pg_libs[@]}"; do
    [ -r "$lib" ] || { echo "fuzz: $lib is missing (postgresql-server-dev-15)" >&2; exit 1; }
done

cflags=(-std=gnu11 -g -O1 -Wall -Wextra -Wno-unused-parameter
        -Isrc/core -Itest -Itest/fuzz -I"$pg_include")
sanitize=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
core=(src/core/*.c)
sources=("${core[@]}" src/core/*.h test/fuzz/*.h test/heap_memory.h test/edge_values.h)

# Rebuild a program when it is missing or older than any of its sources.
stale() {
    local program=$1
    shift
    [ ! -e "$program" ] && return 0
    [ -n "$(find "$@" -newer "$program" 2>/dev/null | head -1)" ]
}

mkdir -p "$out/logs"
build_pids=()
for t in "${targets[@]}"; do
    if stale "$out/$t" "test/fuzz/$t.c" "${sources[@]}"; then
        clang "${cflags[@]}" "${sanitize[@]}" -o "$out/$t" "test/fuzz/$t.c" \
            "${core[@]}" "${pg_libs[@]}" -lm &
        build_pids+=($!)
    fi
done
if stale "$out/make_corpus" test/fuzz/make_corpus.c "${sources[@]}"; then
    clang "${cflags[@]}" -fsanitize=address,undefined -fno-sanitize-recover=all \
        -o "$out/make_corpus" test/fuzz/make_corpus.c "${core[@]}" "${pg_libs[@]}" -lm &
    build_pids+=($!)
fi
for pid in "${build_pids[@]}"; do
    wait "$pid" || { echo "fuzz: build failed" >&2; exit 1; }
done

# Seeds are regenerated every run: they follow the format if it changes.
rm -rf "$out/corpus"
"$out/make_corpus" "$out/corpus"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
failed=()

# --- the saved crashing inputs, each on its own -----------------------------
for t in "${targets[@]}"; do
    for input in test/fuzz/regressions/"$t"/*; do
        [ -f "$input" ] || continue
        log="$out/logs/regression-$t-$(basename "$input").log"
        if "$out/$t" "$input" >"$log" 2>&1; then
            echo "regression $input: ok"
        else
            echo "regression $input: CRASH (see $log)"
            grep -E 'check failed|rejects|runtime error|ERROR: AddressSanitizer|SUMMARY' "$log" | head -4 | sed 's/^/    /'
            failed+=("regression $input")
        fi
    done
done

# --- fuzzing, as many targets at a time as there are cores ------------------
running=0
for t in "${targets[@]}"; do
    mkdir -p "$out/work/$t" "$out/crashes/$t"
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    # (a unit slower than 10 s is written out as a "slow unit", which this
    # script would take for a crash: on a loaded machine that is timing, not
    # a fault; a hang is -timeout's)
    "$out/$t" -max_total_time="$seconds" -timeout=30 -report_slow_units=30 -print_final_stats=1 \
        -artifact_prefix="$out/crashes/$t/" "$out/work/$t" "$out/corpus/$t" \
        >"$out/logs/$t.log" 2>&1 &
    running=$((running + 1))
done
wait || true

printf '\n%-18s %12s %10s  %s\n' target execs execs/s result
for t in "${targets[@]}"; do
    log="$out/logs/$t.log"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    artifact=$(sed -n 's/.*Test unit written to //p' "$log" | tail -1)
    if grep -q -E '^==[0-9]+== ?ERROR: libFuzzer|^SUMMARY: |Test unit written to' "$log"; then
        result="CRASH: ${artifact:-see $log}"
        failed+=("$t")
    elif ! grep -q '^Done [0-9]* runs' "$log"; then
        result="did not finish (see $log)"
        failed+=("$t")
    else
        result=ok
    fi
    printf '%-18s %12s %10s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$result"
done
echo "fuzz: $(($(date +%s) - started)) s in all"

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]}" >&2
    for t in "${targets[@]}"; do
        if grep -q 'Test unit written to' "$out/logs/$t.log"; then
            echo "--- $t" >&2
            # the report and the frames in our sources
            grep -E 'check failed|rejects|runtime error|ERROR: AddressSanitizer|ERROR: LeakSanitizer|SUMMARY|#[0-9]+ 0x[0-9a-f]+ in .* /.*(src/core|test/fuzz)/' \
                "$out/logs/$t.log" | head -12 >&2
        fi
    done
    exit 1
fi
