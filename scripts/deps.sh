#!/usr/bin/env bash
# Install the Debian packages the build and the tests need, if missing.
# Usage: scripts/deps.sh [extra-package ...]
set -euo pipefail

packages=(postgresql-15 postgresql-server-dev-15 libxxhash-dev libcmocka-dev
          libipc-run-perl python3-psycopg libdbd-pg-perl gcc make "$@")

missing=()
for p in "${packages[@]}"; do
    if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then
        sudo=(sudo)
    else
        echo "Please install as root: apt-get install ${missing[*]}" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
