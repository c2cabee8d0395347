#!/usr/bin/env bash
# Runs govulncheck on Go modules of this repository with nothing reachable
# but the Go module proxy: the vulnerability database comes from a
# golang.org/x/vulndb module version (hack/vulndb writes the index
# govulncheck reads from a directory), not from vuln.go.dev. The findings
# are judged by hack/vulndb/gate against hack/govulncheck-accepted.txt.
#
#   GOVULNCHECK=golang.org/x/vuln/cmd/govulncheck@VERSION \
#   VULNDB=golang.org/x/vulndb@VERSION hack/vulncheck.sh MODULE_DIR...
#
# The database is built once per vulndb version under .cache/vulndb (git
# ignores it).
set -euo pipefail

go=${GO:-go}
govulncheck=${GOVULNCHECK:?GOVULNCHECK must name govulncheck, as module/cmd/govulncheck@version}
vulndb=${VULNDB:?VULNDB must name the database module, as golang.org/x/vulndb@version}
root=$(cd "$(dirname "$0")/.." && pwd)

db=$root/.cache/vulndb/${vulndb##*@}
if [ ! -f "$db/index/db.json" ]; then
	(cd "$root/hack/vulndb" && GO=$go $go run . -module "$vulndb" -out "$db")
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for m in "$@"; do
	echo "govulncheck: $m"
	(cd "$root/$m" && $go run "$govulncheck" -db "file://$db" -format json ./...) > "$tmp/report.json"
	(cd "$root/hack/vulndb" && $go run ./gate -accepted "$root/hack/govulncheck-accepted.txt") < "$tmp/report.json" || status=1
done
exit $status
