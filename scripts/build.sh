#!/usr/bin/env bash
# Build the extension and install it into Debian's PostgreSQL 15.
set -euo pipefail
cd "$(dirname "$0")/.."

make -s
if [ "$(id -u)" -eq 0 ]; then
    make -s install >/dev/null
else
    sudo make -s install >/dev/null
fi
