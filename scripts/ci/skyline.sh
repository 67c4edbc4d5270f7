#!/usr/bin/env bash
# Installs what the Skyline suite (tests/clients/skyline.rs) needs and prints
# its export lines:
#
#   eval "$(scripts/ci/keystone.sh)"
#   eval "$(scripts/ci/skyline.sh)"
#
# - venv: ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/venv-skyline with
#   skyline-apiserver and skyline-console (the dashboard's API server and
#   its static bundle) and Playwright for Python (its wheel carries the
#   driver; no browser is downloaded), pinned by the versions below plus
#   scripts/ci/skyline-constraints.txt (every transitive dependency, from
#   `pip freeze` of a working venv); reinstalled only when the pins change.
# - nginx and Chromium from Debian's packages (nginx-light: the modules
#   Skyline's generated configuration uses). Debian starts nginx on port 80
#   when its init system allows; the suite runs its own, so a server the
#   package started is stopped.
#
# Only `export VAR=...` lines go to stdout; progress goes to stderr.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
VENV="$CACHE/venv-skyline"
LOG="$CACHE/skyline-install.log"
SKYLINE_VERSION=9.0.0
PLAYWRIGHT_VERSION=1.65.3

mkdir -p "$CACHE"
log() { echo "[skyline.sh] $*" >&2; }
exec 9>"$CACHE/.skyline.lock"
flock -w 900 9 || { log "FAILED: another skyline.sh holds the lock"; exit 1; }

if ! command -v nginx >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1; then
  log "installing nginx-light and chromium from apt"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    nginx-light chromium fonts-dejavu-core; } >>"$LOG" 2>&1 ||
    { log "FAILED: apt-get install (last lines of $LOG follow)"; tail -n 30 "$LOG" >&2; exit 1; }
  if [[ -s /run/nginx.pid ]] && kill -0 "$(cat /run/nginx.pid)" 2>/dev/null; then
    log "stopping the nginx the package started"
    nginx -s quit >>"$LOG" 2>&1 || kill "$(cat /run/nginx.pid)" || true
  fi
fi

PIN="skyline-apiserver==$SKYLINE_VERSION skyline-console==$SKYLINE_VERSION playwright==$PLAYWRIGHT_VERSION"
PIN_HASH=$( { echo "$PIN"; cat "$HERE/skyline-constraints.txt"; } | sha256sum | cut -c1-16)
if [[ "$(cat "$VENV/.okm-installed" 2>/dev/null)" != "$PIN_HASH" ]]; then
  if [[ ! -x $VENV/bin/python ]]; then
    log "creating $VENV"
    python3 -m venv "$VENV" >>"$LOG" 2>&1
  fi
  log "installing $PIN into $VENV"
  # shellcheck disable=SC2086
  if ! "$VENV/bin/pip" install -q --disable-pip-version-check -c "$HERE/skyline-constraints.txt" \
    $PIN >>"$LOG" 2>&1; then
    log "FAILED: pip install (last lines of $LOG follow)"
    tail -n 30 "$LOG" >&2
    exit 1
  fi
  echo "$PIN_HASH" >"$VENV/.okm-installed"
fi
"$VENV/bin/python" -c 'import skyline_apiserver, skyline_console, playwright' 2>>"$LOG" ||
  { log "FAILED: the packages are not importable from $VENV"; exit 1; }
log "skyline $SKYLINE_VERSION, playwright $PLAYWRIGHT_VERSION, $(nginx -v 2>&1), $(chromium --version 2>/dev/null | head -n1)"
cat <<EOF
export OKM_SKYLINE_PYTHON=$VENV/bin/python
export OKM_NGINX=$(command -v nginx)
export OKM_CHROMIUM=$(command -v chromium)
EOF
