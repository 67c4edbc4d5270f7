#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for FUZZ_SECONDS each (default 120),
# one after the other, starting from its seed corpus fuzz/corpus/seed-<target>/
# (the seeds also run as ordinary tests in `cargo test`). Needs a nightly
# toolchain and cargo-fuzz (`rustup toolchain install nightly`,
# `cargo install cargo-fuzz --locked`).
#   scripts/fuzz.sh                       # every target
#   FUZZ_SECONDS=30 scripts/fuzz.sh ini   # one target
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"
seconds=${FUZZ_SECONDS:-120}
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
for t in "${targets[@]}"; do
  echo "=== $t for ${seconds}s"
  mkdir -p "corpus/$t"
  cargo +nightly fuzz run "$t" "corpus/$t" "corpus/seed-$t" -- -max_total_time="$seconds"
done
