#!/usr/bin/env bash
# Runs every fuzz target of the project for FUZZTIME each (default 5m), one
# after the other, starting from the seed corpora under testdata/fuzz/. Not
# part of every CI run: a benchmark job (or a developer) runs it.
#   FUZZTIME=30s scripts/fuzz.sh                 # all targets
#   scripts/fuzz.sh ./internal/certs FuzzSignCSR # one target
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
FUZZTIME=${FUZZTIME:-5m}
run() {
  echo "=== $1 $2 for $FUZZTIME"
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" "$1"
}
if [[ $# -eq 2 ]]; then
  run "$1" "$2"
  exit 0
fi
for pkg in $(go list ./...); do
  dir=./${pkg#github.com/openkeel/openkeel-magnum/}
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    run "$dir" "$target"
  done
done
