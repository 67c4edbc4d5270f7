#!/usr/bin/env bash
# Installs the peer test suites that run against openkeel-magnum as a black
# box (tests/clients) and prints their export lines:
#
#   eval "$(scripts/ci/keystone.sh)"       # real Keystone (required by all)
#   eval "$(scripts/ci/openstack-cli.sh)"  # `openstack coe` matrix
#   eval "$(scripts/ci/client-suites.sh)"  # tempest plugin + openstacksdk
#
# - venv: ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/venv-client-suites,
#   pinned by the versions below plus scripts/ci/client-suites-constraints.txt
#   (every transitive dependency, from `pip freeze` of a working venv);
#   reinstalled only when the pins change.
# - OPENKEEL_TEST_GOPHERCLOUD=1 enables the gophercloud acceptance tests,
#   which need only Go and the module cache.
#
# Only `export VAR=...` lines go to stdout; progress goes to stderr.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
VENV="$CACHE/venv-client-suites"
LOG="$CACHE/client-suites-install.log"
TEMPEST_VERSION=47.0.0
PLUGIN_VERSION=2.12.0
SDK_VERSION=4.22.0

mkdir -p "$CACHE"
log() { echo "[client-suites.sh] $*" >&2; }
exec 9>"$CACHE/.client-suites.lock"
flock -w 900 9 || { log "FAILED: another client-suites.sh holds the lock"; exit 1; }

pick_python() {
  local p
  for p in "${OKM_PYTHON:-}" python3.11 python3.12 python3.13 python3; do
    [[ -n $p ]] || continue
    command -v "$p" >/dev/null 2>&1 || continue
    "$p" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null && {
      echo "$p"
      return 0
    }
  done
  return 1
}

PIN="tempest==$TEMPEST_VERSION magnum-tempest-plugin==$PLUGIN_VERSION openstacksdk==$SDK_VERSION"
# Runners and the test-only imports of openstacksdk's functional tests.
EXTRAS="stestr pytest oslotest fixtures testscenarios requests-mock"
PIN_HASH=$( { echo "$PIN $EXTRAS"; cat "$HERE/client-suites-constraints.txt"; } | sha256sum | cut -c1-16)
if [[ "$(cat "$VENV/.okm-installed" 2>/dev/null)" != "$PIN_HASH" ]]; then
  if [[ ! -x $VENV/bin/python ]]; then
    PY=$(pick_python) || { log "FAILED: no Python >= 3.10 with venv"; exit 1; }
    log "creating $VENV with $PY"
    "$PY" -m venv "$VENV" >>"$LOG" 2>&1
  fi
  log "installing $PIN into $VENV (a few minutes)"
  # shellcheck disable=SC2086
  if ! "$VENV/bin/pip" install -q --disable-pip-version-check -c "$HERE/client-suites-constraints.txt" \
    $PIN $EXTRAS >>"$LOG" 2>&1; then
    log "FAILED: pip install (last lines of $LOG follow)"
    tail -n 30 "$LOG" >&2
    exit 1
  fi
  echo "$PIN_HASH" >"$VENV/.okm-installed"
fi
"$VENV/bin/python" -c 'import tempest, magnum_tempest_plugin, openstack' 2>>"$LOG" ||
  { log "FAILED: the suites are not importable from $VENV"; exit 1; }
log "tempest $("$VENV/bin/tempest" --version 2>&1 | tail -n1), magnum-tempest-plugin $PLUGIN_VERSION, openstacksdk $SDK_VERSION"
cat <<EOF
export OPENKEEL_TEST_TEMPEST=$VENV/bin/tempest
export OPENKEEL_TEST_SDK_PYTHON=$VENV/bin/python
export OPENKEEL_TEST_GOPHERCLOUD=1
EOF
