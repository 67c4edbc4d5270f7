#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for FUZZ_SECONDS each (default 120),
# one after the other, starting from its seed corpus fuzz/corpus/seed-<target>/
# (the seeds also run as ordinary tests in `cargo test`). Needs a nightly
# toolchain and cargo-fuzz (`rustup toolchain install nightly`,
# `cargo install cargo-fuzz --locked`). The `request` target builds the
# whole service, whose driver host embeds the driver components: they are
# built for wasm32-wasip2 by the repository's toolchain (rust-toolchain.toml,
# through rustup), which has that target when nightly may not. It runs
# without a sanitizer (`-s none`): it is safe Rust over SQLite, whose C code
# the sanitizer flags do not instrument, and the build and the runs stay
# fast.
#   scripts/fuzz.sh                       # every target
#   FUZZ_SECONDS=30 scripts/fuzz.sh ini   # one target
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"
seconds=${FUZZ_SECONDS:-120}
OKM_GUEST_TOOLCHAIN=${OKM_GUEST_TOOLCHAIN:-$(sed -n 's/^channel *= *"\(.*\)"/\1/p' ../rust-toolchain.toml)}
export OKM_GUEST_TOOLCHAIN
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
for t in "${targets[@]}"; do
  echo "=== $t for ${seconds}s"
  mkdir -p "corpus/$t"
  flags=()
  if [[ $t == request ]]; then
    flags=(-s none)
  fi
  cargo +nightly fuzz run "${flags[@]}" "$t" "corpus/$t" "corpus/seed-$t" -- -max_total_time="$seconds"
done
