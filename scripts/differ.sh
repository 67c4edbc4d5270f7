#!/usr/bin/env bash
# Differential run against another implementation of the API: for every
# seed, a fresh `all-in-one` of each binary (its own SQLite file in a
# temporary directory, no Keystone, the fake driver), then the shared
# differ.py (../shared/tools/differ.py) with that seed. Header names are
# compared case-insensitively (HTTP's rule; Go's net/http spells them
# `Openstack-Api-Version`). Prints one line per seed and a total; keeps each
# seed's report when DIFFER_OUT is set.
#
#   scripts/differ.sh A_BIN B_BIN            # seeds 1..20, 400 requests each
#   DIFFER_SEEDS="7 8" DIFFER_STEPS=1000 scripts/differ.sh other-bin target/release/openkeel-magnum
#
# `go` in place of a binary builds the retired Go implementation at its last
# commit (DIFFER_GO_COMMIT, default 0798596) in a temporary git worktree
# (needs Go; about 5 minutes on 2 cores) and compares against that:
#
#   scripts/differ.sh go target/release/openkeel-magnum
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
A=${1:?usage: differ.sh A_BIN|go B_BIN|go}
B=${2:?usage: differ.sh A_BIN|go B_BIN|go}
DIFFER=${DIFFER:-$REPO/../shared/tools/differ.py}
SEEDS=${DIFFER_SEEDS:-$(seq 1 20)}
STEPS=${DIFFER_STEPS:-400}
PORT_A=${DIFFER_PORT_A:-9711}
PORT_B=${DIFFER_PORT_B:-9712}
WORK=$(mktemp -d)
pids=()
worktree=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -z $worktree ]] || git -C "$REPO" worktree remove --force "$worktree" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# binary ARG: ARG's absolute path, or for `go` the Go implementation built
# from a worktree of DIFFER_GO_COMMIT (once per run).
go_bin=""
binary() {
  if [[ $1 != go ]]; then
    realpath "$1"
    return
  fi
  if [[ -z $go_bin ]]; then
    worktree="$WORK/go-src"
    git -C "$REPO" worktree add --detach "$worktree" "${DIFFER_GO_COMMIT:-0798596}" >&2
    echo "building the Go implementation of ${DIFFER_GO_COMMIT:-0798596}" >&2
    (cd "$worktree" && go build -o "$WORK/openkeel-magnum-go" ./cmd/openkeel-magnum) >&2
    go_bin="$WORK/openkeel-magnum-go"
  fi
  echo "$go_bin"
}

start() { # start BIN DIR PORT
  mkdir -p "$2"
  printf '[api]\nhost = 127.0.0.1\nport = %s\n' "$3" >"$2/okm.conf"
  (cd "$2" && exec "$1" all-in-one --config-file okm.conf >log 2>&1) &
  pids+=($!)
}

wait_up() { # wait_up PORT
  for _ in $(seq 1 120); do
    curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$1/" && return 0
    sleep 0.5
  done
  echo "no answer on port $1" >&2
  return 1
}

# Not in $(…): the Go build sets go_bin and worktree for the second call
# and for the clean-up.
binary "$A" >"$WORK/a-bin"
A=$(<"$WORK/a-bin")
binary "$B" >"$WORK/b-bin"
B=$(<"$WORK/b-bin")

agree=0 differ=0
for seed in $SEEDS; do
  d="$WORK/$seed"
  pids=()
  start "$A" "$d/a" "$PORT_A"
  start "$B" "$d/b" "$PORT_B"
  wait_up "$PORT_A"
  wait_up "$PORT_B"
  set +e
  timeout 600 python3 - "$DIFFER" --a "http://127.0.0.1:$PORT_A" --b "http://127.0.0.1:$PORT_B" \
    --seed "$seed" --steps "$STEPS" --report "$d/report.json" >"$d/out.txt" 2>&1 <<'PY'
import runpy, sys
path = sys.argv[1]
sys.argv = [path] + sys.argv[2:]
differ = runpy.run_path(path, run_name="differ")
call = differ["Side"].call
def lower(self, *a, **k):
    st, hd, raw = call(self, *a, **k)
    return st, {name.lower(): v for name, v in hd.items()}, raw
differ["Side"].call = lower
sys.exit(differ["main"]())
PY
  set -e
  line=$(tail -1 "$d/out.txt")
  echo "seed $seed: $line"
  if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    agree=$((agree + BASH_REMATCH[1])) differ=$((differ + BASH_REMATCH[2]))
  else
    echo "seed $seed did not finish:" >&2
    tail -5 "$d/out.txt" >&2
    differ=$((differ + 1))
  fi
  if [[ -n ${DIFFER_OUT:-} ]]; then
    mkdir -p "$DIFFER_OUT"
    cp "$d/out.txt" "$DIFFER_OUT/seed-$seed.txt"
    [[ -f $d/report.json ]] && cp "$d/report.json" "$DIFFER_OUT/seed-$seed.json"
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
done
echo "$agree requests agree, $differ differ"
