#!/usr/bin/env bash
# make test-meta: META.json (the PGXN catalogue entry, meta-spec 1.0.0)
# parses, has the keys PGXN requires and the ones users look for, and says
# the same as the rest of the tree: its versions are the control file's
# default_version (as SemVer: 1.4 is 1.4.0), the files it names exist, its
# licence is LICENSE's, and its PostgreSQL is debian/pgversions' oldest.
# CHANGELOG.md and debian/changelog must have that version too.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh jq

failures=0
reported=0
fail() {
    echo "FAILED: $*" >&2
    failures=$((failures + 1))
}
# "ok" for a group of checks none of which failed
ok() {
    [ $failures -eq $reported ] && echo "   ok  $*"
    reported=$failures
}

if ! jq -e . META.json >/dev/null; then
    echo "FAILED: META.json is not JSON" >&2
    exit 1
fi
ok "META.json parses"
meta() {
    jq -r "$1 // empty" META.json
}
semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$'

# the keys meta-spec 1.0.0 requires, and those PGXN shows users
for key in name version abstract maintainer license provides meta-spec description prereqs; do
    [ "$(jq --arg k "$key" 'has($k)' META.json)" = true ] || fail "META.json has no \"$key\""
done
[ "$(meta '.["meta-spec"].version')" = 1.0.0 ] || fail "meta-spec.version is not 1.0.0"
ok "required keys, meta-spec 1.0.0"

# the version, as the control file and the packages have it
default_version=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" tlbf.control)
[ -n "$default_version" ] || fail "no default_version in tlbf.control"
case $default_version in
    *.*.*) want=$default_version ;;
    *) want=$default_version.0 ;;
esac
version=$(meta .version)
[[ $version =~ $semver ]] || fail "version \"$version\" is not SemVer"
[ "$version" = "$want" ] || fail "META.json version $version, tlbf.control's default_version $default_version (want $want)"
[ "$(meta .name)" = tlbf ] || fail "name is not tlbf"

# what it provides: the extension, at that version, with files that exist
[ "$(jq -r '.provides | keys | join(" ")' META.json)" = tlbf ] || fail "provides is not just tlbf"
[ "$(meta .provides.tlbf.version)" = "$version" ] ||
    fail "provides.tlbf.version $(meta .provides.tlbf.version) is not the version, $version"
file=$(meta .provides.tlbf.file)
[ "$file" = "sql/tlbf--$default_version.sql" ] || fail "provides.tlbf.file is $file, not sql/tlbf--$default_version.sql"
[ -f "$file" ] || fail "provides.tlbf.file $file does not exist"
docfile=$(meta .provides.tlbf.docfile)
[ -n "$docfile" ] && [ -f "$docfile" ] || fail "provides.tlbf.docfile \"$docfile\" does not exist"
[ -n "$(meta .provides.tlbf.abstract)" ] && [ -n "$(meta .abstract)" ] || fail "an abstract is empty"
ok "version $version (tlbf.control: $default_version), provides tlbf in $file"

# the licence
[ "$(meta .license)" = postgresql ] || fail "license is not \"postgresql\""
[ "$(head -n 1 LICENSE)" = "PostgreSQL License" ] || fail "LICENSE is not the PostgreSQL Licence"
ok "licence: postgresql, as LICENSE"

# PostgreSQL: a SemVer, the oldest version the Debian packages are built for
pg=$(meta .prereqs.runtime.requires.PostgreSQL)
[[ $pg =~ $semver ]] || fail "prereqs.runtime.requires.PostgreSQL \"$pg\" is not SemVer"
oldest=$(grep -E '^[0-9]+\+?$' debian/pgversions | tr -d + | sort -n | head -n 1)
[ "$pg" = "$oldest.0.0" ] || fail "requires PostgreSQL $pg, debian/pgversions starts at $oldest"
ok "requires PostgreSQL $pg (debian/pgversions: $(xargs <debian/pgversions))"

# optional parts, checked as the spec has them when present
status=$(meta .release_status)
case $status in ""|stable|testing|unstable) ;; *) fail "release_status \"$status\"" ;; esac
if [ "$(jq 'has("resources")' META.json)" = true ]; then
    jq -e '.resources | length > 0' META.json >/dev/null || fail "resources is empty"
    jq -e '.resources.repository // {} | (has("web") or (has("url") and has("type"))) or (. == {})' \
        META.json >/dev/null || fail "resources.repository needs web, or url and type"
fi

# the changelogs know this version
grep -q "^## $default_version\b" CHANGELOG.md || fail "CHANGELOG.md has no section \"## $default_version\""
deb_version=$(sed -n '1s/^tlbf (\([^)]*\)).*/\1/p' debian/changelog)
[ "${deb_version%-*}" = "$default_version" ] || fail "debian/changelog is at $deb_version"
ok "CHANGELOG.md and debian/changelog ($deb_version) are at $default_version"

if [ $failures -ne 0 ]; then
    exit 1
fi
echo "== META.json and the versions agree"
