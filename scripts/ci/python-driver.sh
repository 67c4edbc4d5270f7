#!/usr/bin/env bash
# Builds the example Python driver (sdk/python/examples/hello_py) into a
# driver package with componentize-py, and prints the export line for the
# conformance tests:
#
#   eval "$(scripts/ci/componentize-py.sh)"
#   eval "$(scripts/ci/python-driver.sh)"
#
# - package: ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/packages/hello-py
#   (driver.toml and hello_py.wasm), rebuilt only when its sources change.
# Only the `export OKM_PYTHON_DRIVER=...` line goes to stdout.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
OUT="$CACHE/packages/hello-py"
CPY="${OKM_COMPONENTIZE_PY:?run scripts/ci/componentize-py.sh first}"
EXAMPLE="$ROOT/sdk/python/examples/hello_py"

log() { echo "[python-driver.sh] $*" >&2; }

sum=$(cat "$EXAMPLE"/app.py "$EXAMPLE"/driver.toml "$ROOT"/sdk/python/openkeel_magnum_driver/*.py \
  "$ROOT"/wit/magnum-driver@1.0.0/*.wit | sha256sum | cut -d' ' -f1)
if [[ -f $OUT/hello_py.wasm && "$(cat "$OUT/.sources" 2>/dev/null)" == "$sum" ]]; then
  log "up to date: $OUT"
else
  mkdir -p "$OUT"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp "$EXAMPLE"/app.py "$work"/
  start=$(date +%s)
  # The kube-driver world: the driver uses Kubernetes and nothing the
  # operator would have to grant besides.
  "$CPY" -q -d "$ROOT/wit/magnum-driver@1.0.0" -w kube-driver componentize \
    -p "$work" -p "$ROOT/sdk/python" app -o "$work/hello_py.wasm" >&2
  cp "$work/hello_py.wasm" "$EXAMPLE/driver.toml" "$OUT"/
  echo "$sum" >"$OUT/.sources"
  log "built $OUT/hello_py.wasm ($(stat -c %s "$OUT/hello_py.wasm") bytes) in $(($(date +%s) - start)) s"
fi
echo "export OKM_PYTHON_DRIVER=$OUT"
