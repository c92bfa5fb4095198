#!/usr/bin/env bash
# make demo: the filter on a real web access log, the 1998 World Cup site's
# (data/README.md), shipped in the repository so that a fresh clone runs
# the demo on it.  TLBF_DEMO_LOG names another log in the same format.
set -euo pipefail
cd "$(dirname "$0")/.."

log="${TLBF_DEMO_LOG:-data/wc98_day6_sample200k.sorted.csv.gz}"
# Say so before installing anything: a demo on some other stream would
# show figures the README does not describe.
if [ ! -r "$log" ]; then
    echo "demo: the web log $log is missing (data/README.md says what it is)" >&2
    exit 1
fi

scripts/deps.sh
scripts/build.sh

scripts/cluster.sh bash -c '
    set -euo pipefail
    psql -X -q -c "CREATE EXTENSION tlbf" \
         -c "CREATE TABLE raw_requests (client bigint, day text, time text, url text, status text, size text)"
    echo "Loading $1"
    # a few URLs hold bytes that are not UTF-8: read the log as Latin-1
    zcat "$1" | PGCLIENTENCODING=LATIN1 psql -X -q -c "\copy raw_requests FROM STDIN WITH (FORMAT csv, QUOTE E'"'"'\x01'"'"')"
    psql -X -f scripts/demo.sql
' demo "$log"
