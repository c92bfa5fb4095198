#!/usr/bin/env bash
# Print the directory the version matrix, the Citus tests and the Citus
# benchmark keep their copies of PostgreSQL in: $MATRIX_CACHE, else
# /var/cache/tlbf as root (the servers run as postgres, who cannot enter
# /root), else ${XDG_CACHE_HOME:-~/.cache}/tlbf.
set -euo pipefail
if [ -n "${MATRIX_CACHE:-}" ]; then
    echo "$MATRIX_CACHE"
elif [ "$(id -u)" -eq 0 ]; then
    echo /var/cache/tlbf
else
    echo "${XDG_CACHE_HOME:-$HOME/.cache}/tlbf"
fi
