#!/usr/bin/env bash
# make demo: the filter on a real web access log (the 1998 World Cup site,
# ../shared/data), or on a generated stream when the log is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
scripts/build.sh

log="${TLBF_DEMO_LOG:-../shared/data/wc98_day6_sample200k.sorted.csv.gz}"
scripts/cluster.sh bash -c '
    set -euo pipefail
    psql -X -q -c "CREATE EXTENSION tlbf" \
         -c "CREATE TABLE raw_requests (client bigint, day text, time text, url text, status text, size text)"
    if [ -f "$1" ]; then
        echo "Loading $1"
        # a few URLs hold bytes that are not UTF-8: read the log as Latin-1
        zcat "$1" | PGCLIENTENCODING=LATIN1 psql -X -q -c "\copy raw_requests FROM STDIN WITH (FORMAT csv, QUOTE E'"'"'\x01'"'"')"
    else
        echo "$1 is absent: using a generated stream instead"
        psql -X -q -f scripts/demo_generate.sql
    fi
    psql -X -f scripts/demo.sql
' demo "$log"
