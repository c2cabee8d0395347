#!/usr/bin/env bash
# Compares the exported API of the library and ctrlruntime modules at the
# last release tag with the work tree, with golang.org/x/exp's apidiff, and
# fails on an incompatible change unless CHANGELOG.md's Unreleased section
# announces one under "### Breaking" (the rule before v1.0.0; see
# CONTRIBUTING.md, Releases). On a release-* branch, where patch releases
# are cut, an incompatible change always fails.
#
#   APIDIFF=golang.org/x/exp/cmd/apidiff@VERSION hack/apidiff.sh [MODULE_DIR...]
#
# The release tag is the newest "vX.Y.Z" reachable from HEAD; the ctrlruntime
# module's tag, ctrlruntime/vX.Y.Z, is on the same commit. Internal packages
# (apidiff leaves them out) and main packages, which nothing imports, are not
# compared. Without a tag there is nothing to compare, and the check passes.
set -euo pipefail

go=${GO:-go}
apidiff=${APIDIFF:?APIDIFF must name apidiff, as module/cmd/apidiff@version}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ $# -eq 0 ]; then
	set -- . ctrlruntime
fi

if ! tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null); then
	echo "apidiff: no release tag yet, nothing to compare"
	exit 0
fi

# The tag's tree and its export data are kept under .cache/apidiff (git
# ignores it), per tag and Go version: a second run builds the work tree
# only, and the tag's packages come from the go command's cache.
cache=$root/.cache/apidiff/$tag/$($go env GOVERSION)
if [ ! -f "$cache/.extracted" ]; then
	rm -rf "$cache"
	mkdir -p "$cache/old"
	git archive "$tag" | tar -x -C "$cache/old"
	touch "$cache/.extracted"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# mains lists a tree's main packages as apidiff names them: by import path
# and by path relative to the module ("./cmd/x").
mains() {
	(cd "$1" && $go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./...) | sed '/^$/d' |
		while read -r path; do
			echo "$path"
			echo ".${path#"$2"}"
		done
}

# exportdata writes the export data of every package of module $2, built in
# directory $1, to $3; apidiff's chatter (the internal packages it leaves
# out) is shown only if it fails.
exportdata() {
	if ! (cd "$1" && $go run "$apidiff" -m -w "$3" "$2") > "$tmp/log" 2>&1; then
		cat "$tmp/log" >&2
		return 1
	fi
}

incompatible=0
for m in "$@"; do
	if [ ! -f "$cache/old/$m/go.mod" ]; then
		echo "apidiff: $m: no module at $tag, nothing to compare"
		continue
	fi
	modpath=$(cd "$m" && $go list -m)
	name=$(echo "$m" | tr '/.' '__')
	# Export data of every package of the module, each tree built by its
	# own go.mod (and, for ctrlruntime, the library of the same tree).
	if [ ! -f "$cache/$name.x" ]; then
		exportdata "$cache/old/$m" "$modpath" "$cache/$name.x.new"
		mv "$cache/$name.x.new" "$cache/$name.x"
	fi
	exportdata "$m" "$modpath" "$tmp/$name.x"
	{ mains "$cache/old/$m" "$modpath"; mains "$m" "$modpath"; } | sort -u > "$tmp/$name.mains"
	if ! $go run "$apidiff" -m -incompatible "$cache/$name.x" "$tmp/$name.x" > "$tmp/$name.report" 2> "$tmp/log"; then
		cat "$tmp/log" >&2
		exit 1
	fi
	# A report line names its package first: "package P: ..." for a
	# package added or removed, "./rel.Name: ..." otherwise.
	while read -r main; do
		grep -v -F -e "- package $main: " -e "- $main." -e "- $main: " "$tmp/$name.report" > "$tmp/$name.filtered" || true
		mv "$tmp/$name.filtered" "$tmp/$name.report"
	done < "$tmp/$name.mains"
	if [ -s "$tmp/$name.report" ]; then
		echo "apidiff: $modpath: incompatible changes since $tag:"
		cat "$tmp/$name.report"
		incompatible=1
	else
		echo "apidiff: $modpath: compatible with $tag"
	fi
done

if [ "$incompatible" -eq 0 ]; then
	exit 0
fi

# The Unreleased section of CHANGELOG.md, up to the next release heading.
unreleased=$(awk '/^## \[Unreleased\]/ {on=1; next} /^## / {on=0} on' CHANGELOG.md 2>/dev/null || true)
# A "### Breaking" heading with at least one list item under it.
breaking=$(printf '%s\n' "$unreleased" | awk '/^### / {on=($0 ~ /^### Breaking[[:space:]]*$/); next} on && /^[-*] /' )
branch=$(git rev-parse --abbrev-ref HEAD)
case "$tag" in
v0.*) pre1=1 ;;
*) pre1=0 ;;
esac
if [ -n "$breaking" ] && [ "$pre1" -eq 1 ] && [[ "$branch" != release-* ]]; then
	echo "apidiff: announced under \"### Breaking\" in CHANGELOG.md's Unreleased section; allowed before v1.0.0"
	exit 0
fi
if [[ "$branch" == release-* ]]; then
	echo "apidiff: a patch release ($branch) may not change the API incompatibly" >&2
elif [ "$pre1" -eq 0 ]; then
	echo "apidiff: from v1.0.0 on an incompatible change needs a new major version" >&2
else
	echo "apidiff: list each incompatible change under \"### Breaking\" in CHANGELOG.md's Unreleased section (and in MIGRATING.md), or keep the API compatible" >&2
fi
exit 1
