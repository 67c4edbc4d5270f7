#!/usr/bin/env bash
# Builds the example Rust driver (sdk/examples/hello, a project outside the
# repository's workspaces, as a third party's would be) into a driver
# package, and prints the export line for the conformance tests:
#
#   eval "$(scripts/ci/example-driver.sh)"
#
# - build:   target/examples (release, wasm32-wasip2)
# - package: target/examples/package/hello (driver.toml, hello_driver.wasm)
# Only the `export OKM_EXAMPLE_DRIVER=...` line goes to stdout.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
EXAMPLE="$ROOT/sdk/examples/hello"
TARGET_DIR="$ROOT/target/examples"
OUT="$TARGET_DIR/package/hello"

(cd "$EXAMPLE" && cargo build --release --locked --target wasm32-wasip2 --target-dir "$TARGET_DIR" >&2)
mkdir -p "$OUT"
cp "$EXAMPLE/driver.toml" "$TARGET_DIR/wasm32-wasip2/release/hello_driver.wasm" "$OUT"/
echo "[example-driver.sh] $OUT/hello_driver.wasm ($(stat -c %s "$OUT/hello_driver.wasm") bytes)" >&2
echo "export OKM_EXAMPLE_DRIVER=$OUT"
