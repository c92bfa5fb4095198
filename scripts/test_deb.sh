#!/usr/bin/env bash
# make test-deb: build the Debian packages (scripts/deb.sh), then, for each
# PostgreSQL whose server is installed here, install postgresql-NN-tlbf
# with apt, as a user would, and check it in a fresh cluster: CREATE
# EXTENSION, answers, the summary, and the library preloaded (shared
# filters and the launcher); test/deb holds the queries and their answers.
#
# The package's files are the ones `make install` writes, at the same
# paths under /usr/lib/postgresql/NN and /usr/share/postgresql/NN: the
# source build that `make test` installed, or another checkout's.  They are
# saved first, and put back once the package is purged, also on failure,
# so that the other tests test what they tested before.  A package already
# installed is not replaced: the test stops and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

scripts/deb.sh

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

work=$(mktemp -d /tmp/tlbf-test-deb.XXXXXX)
chmod 755 "$work"
current=""      # the package installed now, to purge and restore on exit
restore() {
    local status=$?
    if [ -n "$current" ]; then
        echo "restoring the files the package replaced"
        "${sudo[@]}" apt-get purge -y -qq "$current" >/dev/null || status=1
        if [ -s "$work/saved-$current.tar" ]; then
            "${sudo[@]}" tar -xPpf "$work/saved-$current.tar" || status=1
            # the restored files are the saved ones, byte for byte
            "${sudo[@]}" tar -dPf "$work/saved-$current.tar" || status=1
        fi
    fi
    rm -rf "$work"
    exit $status
}
trap restore EXIT

default_version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" tlbf.control)
scripts=$( (cd sql && ls tlbf--*.sql); echo tlbf.control)
tested=0
for deb in build/deb/postgresql-*-tlbf_*.deb; do
    package=$(dpkg-deb -f "$deb" Package)
    major=${package#postgresql-}
    major=${major%-tlbf}
    bindir=/usr/lib/postgresql/$major/bin
    if [ ! -x "$bindir/postgres" ]; then
        echo "== $package: no PostgreSQL $major server here (postgresql-$major), not tested"
        continue
    fi
    echo "== $package ($(dpkg-deb -f "$deb" Version))"

    # what the package holds: the library, the control file and every
    # install and update script of this tree, nothing else under
    # PostgreSQL's directories
    sharedir=$("$bindir/pg_config" --sharedir)
    pkglibdir=$("$bindir/pg_config" --pkglibdir)
    dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\.||' | grep -v '/$' >"$work/contents"
    want=$( (echo "$pkglibdir/tlbf.so"; for f in $scripts; do echo "$sharedir/extension/$f"; done) | sort)
    got=$(grep -E "^($pkglibdir/tlbf\.so|$sharedir/extension/)" "$work/contents" | sort)
    if [ "$want" != "$got" ]; then
        echo "FAILED: $package holds other files than expected" >&2
        diff <(echo "$want") <(echo "$got") >&2 || true
        exit 1
    fi
    if grep -v -E "^($pkglibdir/|$sharedir/extension/|/usr/share/doc/$package/)" "$work/contents"; then
        echo "FAILED: $package installs files outside PostgreSQL $major's directories" >&2
        exit 1
    fi
    version=$(dpkg-deb -f "$deb" Version)
    if [ "${version%-*}" != "$default_version" ]; then
        echo "FAILED: package version $version, extension version $default_version" >&2
        exit 1
    fi

    if [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" = installed ]; then
        echo "FAILED: $package is installed already; remove it first (apt-get purge $package)" >&2
        exit 1
    fi
    # save what is there now at the package's paths (a source build)
    mapfile -t present < <(while read -r f; do [ -e "$f" ] && echo "$f"; done <"$work/contents")
    : >"$work/saved-$package.tar"
    if [ ${#present[@]} -gt 0 ]; then
        "${sudo[@]}" tar -cPpf "$work/saved-$package.tar" "${present[@]}"
    fi
    current=$package
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "./$deb" >/dev/null
    if [ "$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$package")" != "installed $version" ]; then
        echo "FAILED: $package $version is not installed" >&2
        exit 1
    fi
    dpkg-deb --fsys-tarfile "$deb" | tar -xf - -C "$work" ./usr/lib/postgresql/"$major"/lib/tlbf.so
    cmp "$work/usr/lib/postgresql/$major/lib/tlbf.so" "$pkglibdir/tlbf.so"

    # a fresh cluster of that version, library not preloaded, then one
    # with the library preloaded (test/deb: the queries and their answers)
    # They run from a directory only this user may enter, as a clone under
    # /root or in a mktemp -d directory is: nothing may depend on where the
    # clone lives (the server runs as another user).
    private=$(mktemp -d "$work/private.XXXXXX")
    chmod 700 "$private"
    for kind in plain preloaded; do
        preload=()
        [ $kind = preloaded ] && preload=(--preload)
        if ! (cd "$private" && PG_CONFIG=$bindir/pg_config "$repo/scripts/cluster.sh" "${preload[@]}" \
                psql -X -q -A -t -v ON_ERROR_STOP=1 -v version="$default_version" \
                -f "$repo/test/deb/$kind.sql") >"$work/$kind.out" 2>&1 ||
                ! diff -u test/deb/$kind.out "$work/$kind.out"; then
            echo "FAILED: $package in a cluster ($kind):" >&2
            cat "$work/$kind.out" >&2
            exit 1
        fi
        sed 's/^/   ok  /' "$work/$kind.out"
    done

    # purge, and put back what was there
    "${sudo[@]}" apt-get purge -y -qq "$package" >/dev/null
    current=""
    if [ -s "$work/saved-$package.tar" ]; then
        "${sudo[@]}" tar -xPpf "$work/saved-$package.tar"
        "${sudo[@]}" tar -dPf "$work/saved-$package.tar"
        echo "   removed; the $(tar -tPf "$work/saved-$package.tar" | grep -vc '/$') files saved before are back"
    else
        echo "   removed (no tlbf was installed there before)"
    fi
    tested=$((tested + 1))
done

if [ $tested -eq 0 ]; then
    echo "test-deb: no package had its PostgreSQL server here" >&2
    exit 1
fi
echo "== $tested package(s) installed, checked and removed"
