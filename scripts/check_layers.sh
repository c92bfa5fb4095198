#!/usr/bin/env bash
# The rules of docs/server.md's layers that a grep can check, on the
# sources alone (no build, no PostgreSQL):
#   - the SQL functions of shared filters (src/shared_functions.c,
#     src/shared_trigger.c) do not include the shared-memory directory's
#     header, src/shared_directory.h, directly or through any header of
#     src/ (so neither may src/shared_store.h, which they include);
#   - they, and src/maintenance.c, call no tlbf_directory_* function
#     (comments aside): they go through the store, tlbf_store_*.
# Prints each breach with the include chain or the line, and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

DIRECTORY_HEADER=src/shared_directory.h
NO_DIRECTORY_HEADER=(src/shared_functions.c src/shared_trigger.c src/shared_store.h)
NO_DIRECTORY_CALLS=(src/shared_functions.c src/shared_trigger.c src/maintenance.c)

status=0
declare -A included_by

# Record every header of the tree that $1 includes, recursively, with the
# file that included it.  "x.h" is looked for next to the includer, then
# in src/ (PG_CPPFLAGS = -I src); PostgreSQL's headers are found in
# neither and are not followed.
walk() {
    local file=$1 name path
    while read -r name; do
        for path in "$(dirname "$file")/$name" "src/$name"; do
            [ -f "$path" ] || continue
            path=$(realpath --relative-to=. "$path")
            if [ -z "${included_by[$path]:-}" ]; then
                included_by[$path]=$file
                walk "$path"
            fi
            break
        done
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
}

# "a.c -> b.h -> c.h" for header $2, reached from $1
chain() {
    local from=$1 path=$2 text=$2
    while [ "$path" != "$from" ]; do
        path=${included_by[$path]}
        text="$path -> $text"
    done
    echo "$text"
}

for file in "${NO_DIRECTORY_HEADER[@]}"; do
    included_by=()
    walk "$file"
    if [ -n "${included_by[$DIRECTORY_HEADER]:-}" ]; then
        echo "$file includes $DIRECTORY_HEADER: $(chain "$file" "$DIRECTORY_HEADER")" >&2
        status=1
    fi
done

for file in "${NO_DIRECTORY_CALLS[@]}"; do
    # comments blanked, lines kept, so that grep's line numbers are the file's
    if perl -0777 -pe 's{/\*.*?\*/}{(my $c = $&) =~ tr/\n//cd; $c}gse; s{//[^\n]*}{}g' "$file" |
        grep -n 'tlbf_directory_' | sed "s|^|$file:|" >&2; then
        status=1
    fi
done

if [ $status -ne 0 ]; then
    echo "The SQL functions reach shared memory only through the store (shared_store.h): see docs/server.md, Layers." >&2
    exit 1
fi
echo "layers: the SQL functions of shared filters reach the directory only through the store"
