#!/usr/bin/env bash
# Run a command on a copy of this tree as an unprivileged user.  The TAP
# tests start their own clusters, and PostgreSQL refuses to run as root;
# as root the tree is copied to a temporary directory owned by postgres
# and the command runs there as postgres.  Otherwise it runs here.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
    exec "$@"
fi

copy=$(mktemp -d /tmp/tlbf-tests.XXXXXX)
trap 'rm -rf "$copy"' EXIT
tar --exclude=./build --exclude=./results --exclude=./tmp_check -cf - . | tar -xf - -C "$copy"
chown -R postgres: "$copy"
status=0
runuser -u postgres -- bash -c 'cd "$1" && shift && "$@"' _ "$copy" "$@" || status=$?
if [ $status -ne 0 ] && [ -d "$copy/tmp_check/log" ]; then
    # keep the logs of a failed run where CI can show them
    rm -rf tmp_check && cp -r "$copy/tmp_check" tmp_check
    tail -n 50 tmp_check/log/regress_log_* 2>/dev/null || true
    # last, where CI's output ends: which tests failed
    echo "== failed TAP tests:"
    grep -H -A4 -E '^(\[[^]]*\]\([^)]*\) )?not ok' tmp_check/log/regress_log_* 2>/dev/null |
        head -n 40 || true
    # a test that died: its last lines before it stopped
    grep -H -B6 -E 'Looks like your test (exited|died)' tmp_check/log/regress_log_* 2>/dev/null |
        head -n 40 || true
fi
exit $status
