#!/usr/bin/env bash
# Runs a module's unit tests against other versions of its dependencies
# without touching the tracked go.mod: each run gets a copy of go.mod and
# go.sum in a temporary directory, raises the named modules there with
# `go get -modfile`, and tests with `go test -modfile`. The go command then
# resolves the module graph from the copy, with the module's own sources.
#
#   hack/compat.sh DIR 'MOD@VER MOD@VER ...' ['MOD@VER ...' ...]
#
# Each quoted argument after DIR is one run. COMPAT_TEST_FLAGS adds flags to
# go test (for example -race or -count=1); by default go test's result
# cache applies, so a run whose sources and versions are unchanged is not
# repeated.
set -euo pipefail

go=${GO:-go}
dir=$1
shift
cd "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for set in "$@"; do
	cp go.mod "$tmp/go.mod"
	cp go.sum "$tmp/go.sum"
	echo "compat: $dir with $set"
	# shellcheck disable=SC2086 # $set is a list of module@version words
	$go get -modfile="$tmp/go.mod" $set 2>&1 | grep -v '^go: downloading' || true
	# A failed go get leaves the copy unchanged: check that every module
	# now has the asked version rather than test the floor again.
	for mv in $set; do
		got=$($go list -modfile="$tmp/go.mod" -m -f '{{.Path}}@{{.Version}}' "${mv%@*}")
		if [ "$got" != "$mv" ]; then
			echo "compat: $dir: wanted $mv, the module graph has $got" >&2
			exit 1
		fi
	done
	# A newer release may need modules (or packages split into modules of
	# their own) the floor's go.sum has no checksum for: tidy the copy.
	$go mod tidy -modfile="$tmp/go.mod" 2>&1 | grep -v '^go: downloading' || true
	# shellcheck disable=SC2086 # COMPAT_TEST_FLAGS is a list of flags
	$go test -modfile="$tmp/go.mod" ${COMPAT_TEST_FLAGS:-} ./...
done
