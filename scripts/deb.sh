#!/usr/bin/env bash
# make deb: Debian packages of the extension, as Debian builds those of
# other extensions (pg_buildext, debhelper's pgxs_loop): postgresql-NN-tlbf
# for every PostgreSQL whose server development files are installed here
# (postgresql-server-dev-NN) and that debian/pgversions allows (15 on).
# The packages (and the build's log) go to build/deb/.
#
#   PG_SUPPORTED_VERSIONS="15 17" make deb    only these versions
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

scripts/deps.sh debhelper dpkg-dev postgresql-server-dev-all

# pg_buildext builds for the distribution's supported versions (Debian 12:
# 15 alone) unless told otherwise; a user who installed the development
# files of another version wants its package too.
export PG_SUPPORTED_VERSIONS=${PG_SUPPORTED_VERSIONS:-installed}

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
out=$repo/build/deb
rm -rf "$out"
mkdir -p "$out"

# dpkg-buildpackage writes the packages into the parent of the source
# tree, and its clean step runs make clean (which removes build/): build
# in a copy, without this tree's objects and test output.
work=$(mktemp -d /tmp/tlbf-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/tlbf-${version%-*}
mkdir "$src"
tar --exclude=./.git --exclude=./build --exclude=./results --exclude=./tmp_check \
    --exclude=./output_iso --exclude=./output_preload --exclude='*.o' --exclude='*.so' \
    --exclude='*.bc' --exclude=./regression.diffs --exclude=./regression.out \
    -cf - . | tar -xf - -C "$src"

echo "== building tlbf $version for PostgreSQL $(cd "$src" && pg_buildext supported-versions | xargs)"
status=0
(
    cd "$src"
    # debian/control lists one package per version: make it list the
    # versions of this machine (the committed one is Debian 12's)
    pg_buildext updatecontrol
    dpkg-buildpackage -us -uc -b
) >"$out/build.log" 2>&1 || status=$?
if [ $status -ne 0 ]; then
    tail -n 40 "$out/build.log" >&2
    echo "deb: dpkg-buildpackage failed (the whole log: build/deb/build.log)" >&2
    exit 1
fi

mv "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out/"
echo "packages in build/deb (log: build/deb/build.log):"
for deb in "$out"/*.deb; do
    echo "  $(basename "$deb")  $(dpkg-deb -f "$deb" Depends)"
done
echo "install one with: apt-get install ./build/deb/postgresql-NN-tlbf_${version}_$(dpkg --print-architecture).deb"
