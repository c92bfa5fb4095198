#!/usr/bin/env bash
# Build the extension and install it into the PostgreSQL the Makefile picks
# (PG_CONFIG; by default Debian's, which scripts/deps.sh installs).
set -euo pipefail
cd "$(dirname "$0")/.."

make -s
if [ "$(id -u)" -eq 0 ]; then
    make -s install >/dev/null
else
    sudo make -s install >/dev/null
fi
