#!/usr/bin/env bash
# Creates the Python of the notification tests (OKM_TEST_NOTIFY_PYTHON): a
# venv with oslo.messaging and pycadf pinned to the versions of the 2026.2
# upper-constraints (the release Magnum 23.0.0 is tested with). The tests run
# host/magnum-integrations/testdata/notify/listener.py with it: a real
# oslo.messaging notification listener that checks every payload with pycadf.
#
#   eval "$(scripts/ci/notify-listener.sh)"
#
# - venv: ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/venv-notify
# - log:  .../venv-notify/install.log (the tail is printed on failure)
#
# Idempotent: a second run reuses the venv and reinstalls only when the pins
# below change. Only the `export OKM_TEST_NOTIFY_PYTHON=...` line goes to
# stdout; progress goes to stderr. No server is started (the broker is
# scripts/ci/rabbitmq.sh).
set -euo pipefail

CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
VENV="$CACHE/venv-notify"
LOG="$VENV/install.log"

# oslo.messaging and pycadf with their dependency closure, as pinned by the
# upper-constraints for 2026.2 (Magnum 23.0.0).
PINS=(
  oslo.messaging==18.3.1
  pycadf==4.1.0
  amqp==5.4.2
  bcrypt==5.0.0
  cachetools==8.0.2
  certifi==2026.10.19.post1
  charset-normalizer==3.5.3
  debtcollector==3.1.0
  dnspython==2.9.2
  eventlet==0.41.3
  fasteners==0.20
  futurist==3.5.0
  greenlet==3.5.6
  idna==3.20
  iso8601==2.1.0
  Jinja2==3.1.6
  kombu==5.7.0
  MarkupSafe==3.0.4
  msgpack==1.2.4
  netaddr==1.3.0
  oslo.concurrency==7.6.1
  oslo.config==10.7.0
  oslo.context==6.5.0
  oslo.i18n==6.9.0
  oslo.log==8.3.2
  oslo.metrics==0.17.0
  oslo.middleware==8.2.0
  oslo.serialization==5.11.0
  oslo.service==4.8.0
  oslo.utils==10.2.0
  packaging==26.4
  Paste==3.10.1
  PasteDeploy==3.1.0
  pbr==7.1.3
  prometheus_client==0.26.0
  psutil==7.2.2
  pyparsing==3.3.3
  python-dateutil==4.0.0
  PyYAML==6.0.4
  repoze-lru==0.8
  requests==2.34.2
  rfc3986==2.0.0
  Routes==2.5.1
  six==1.17.0
  statsd==4.0.1
  stevedore==5.10.0
  typing_extensions==4.16.0
  tzdata==2026.6
  urllib3==2.8.0
  vine==5.1.0
  WebOb==1.8.11
  wrapt==2.5.2
  yappi==1.7.6
)
# Top-level packages to install (the rest of PINS are their dependencies).
INSTALL=(oslo.messaging pycadf)

log() { echo "[notify-listener.sh] $*" >&2; }
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
    # oslo.messaging 18.3.1 requires Python >= 3.10; the pins are those of 3.11+.
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
    PY=$(pick_python) || fail "oslo.messaging needs Python >= 3.11 with the venv module"
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
got=$("$VENV/bin/python" -c 'import oslo_messaging, pycadf
from importlib.metadata import version; print(version("oslo.messaging"), version("pycadf"))' 2>>"$LOG") ||
  fail "oslo.messaging or pycadf is not importable from $VENV"
[[ $got == "${PINS[0]#oslo.messaging==} ${PINS[1]#pycadf==}" ]] ||
  fail "oslo.messaging/pycadf $got installed, want ${PINS[0]} ${PINS[1]}"
log "oslo.messaging and pycadf ($got) ready in $VENV"
echo "export OKM_TEST_NOTIFY_PYTHON=$VENV/bin/python"
