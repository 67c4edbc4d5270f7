#!/usr/bin/env bash
# Creates the Python used by the differential tests (OPENKEEL_TEST_PYTHON):
# a venv with oslo.policy pinned to the version of the 2026.2
# upper-constraints (the release Magnum 23.0.0 is tested with), which brings
# oslo.config for the config oracle, plus cryptography for the certs oracle
# and prometheus_client, whose OpenMetrics parser reads /metrics in the e2e
# suite.
#
#   eval "$(scripts/ci/python-oracle.sh)"
#
# - venv: ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/venv-oracle
# - log:  .../venv-oracle/install.log (the tail is printed on failure)
#
# Idempotent: a second run reuses the venv and reinstalls only when the pins
# below change. Only the `export OPENKEEL_TEST_PYTHON=...` line goes to stdout;
# progress goes to stderr. No server is started.
set -euo pipefail

CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
VENV="$CACHE/venv-oracle"
LOG="$VENV/install.log"

# oslo.policy and cryptography with their dependency closure, as pinned by
# the upper-constraints for 2026.2 (Magnum 23.0.0).
PINS=(
  oslo.policy==6.0.1
  oslo.config==10.7.0
  oslo.context==6.5.0
  oslo.i18n==6.9.0
  oslo.serialization==5.11.0
  oslo.utils==10.2.0
  PyYAML==6.0.4
  stevedore==5.10.0
  requests==2.34.2
  debtcollector==3.1.0
  netaddr==1.3.0
  rfc3986==2.0.0
  iso8601==2.1.0
  msgpack==1.2.4
  packaging==26.4
  psutil==7.2.2
  pyparsing==3.3.3
  pbr==7.1.3
  tzdata==2026.6
  urllib3==2.8.0
  idna==3.20
  wrapt==2.5.2
  cryptography==50.0.2
  cffi==2.1.1
  pycparser==3.12
  certifi==2026.10.19.post1
  charset-normalizer==3.5.3
  typing_extensions==4.16.0
  prometheus_client==0.26.0
)
# Top-level packages to install (the rest of PINS are their dependencies).
INSTALL=(oslo.policy cryptography prometheus_client)

log() { echo "[python-oracle.sh] $*" >&2; }
fail() {
  log "FAILED: $*"
  if [[ -s $LOG ]]; then
    log "last lines of $LOG:"
    tail -n 40 "$LOG" >&2
  fi
  exit 1
}

pick_python() {
  local p
  for p in "${OKM_PYTHON:-}" python3.11 python3.12 python3.13 python3; do
    [[ -n $p ]] || continue
    command -v "$p" >/dev/null 2>&1 || continue
    # oslo.policy 6.0.1 requires Python >= 3.11.
    "$p" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && {
      echo "$p"
      return 0
    }
  done
  return 1
}

mkdir -p "$CACHE"
if [[ ! -x $VENV/bin/python ]]; then
  PY=$(pick_python) || {
    log "no Python >= 3.11 with venv; installing python3-venv from Debian"
    mkdir -p "$VENV"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv; } >>"$LOG" 2>&1 ||
      fail "could not install python3-venv"
    PY=$(pick_python) || fail "oslo.policy needs Python >= 3.11 with the venv module"
  }
  log "creating venv $VENV with $PY"
  mkdir -p "$VENV"
  "$PY" -m venv "$VENV" >>"$LOG" 2>&1 || fail "python -m venv"
fi

PIN_HASH=$(printf '%s\n' "${PINS[@]}" | sha256sum | cut -c1-16)
if [[ "$(cat "$VENV/.okm-installed" 2>/dev/null)" != "$PIN_HASH" ]]; then
  log "installing ${INSTALL[*]} into $VENV"
  printf '%s\n' "${PINS[@]}" >"$VENV/constraints.txt"
  "$VENV/bin/pip" install -q --disable-pip-version-check -c "$VENV/constraints.txt" "${INSTALL[@]}" >>"$LOG" 2>&1 ||
    fail "pip install (see $LOG)"
  echo "$PIN_HASH" >"$VENV/.okm-installed"
fi
got=$("$VENV/bin/python" -c 'import oslo_policy, oslo_config, cryptography, prometheus_client.openmetrics.parser
from importlib.metadata import version; print(version("oslo.policy"))' 2>>"$LOG") ||
  fail "oslo.policy, oslo.config, cryptography or prometheus_client is not importable from $VENV"
[[ $got == "${PINS[0]#oslo.policy==}" ]] || fail "oslo.policy $got installed, want ${PINS[0]}"
log "oslo.policy $got ready in $VENV"
echo "export OPENKEEL_TEST_PYTHON=$VENV/bin/python"
