#!/usr/bin/env bash
# Installs componentize-py (PyPI), which builds the Python driver of
# sdk/python into a WebAssembly component, and pytest, which runs the
# example's native tests (sdk/python/examples/hello_py/test_app.py), into a
# venv outside the repository and prints the export lines for the tests:
#
#   eval "$(scripts/ci/componentize-py.sh)"
#
# - venv: ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/venv-componentize-py
# - log:  .../venv-componentize-py/install.log (the tail is printed on failure)
#
# Idempotent: a second run reuses the venv and reinstalls only when the pin
# changes. Only the `export OKM_COMPONENTIZE_PY=...` and `export
# OKM_PYTEST=...` lines go to stdout.
set -euo pipefail

CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
VENV="$CACHE/venv-componentize-py"
LOG="$VENV/install.log"
PIN="componentize-py==0.25.1 pytest==9.2.0"

log() { echo "[componentize-py.sh] $*" >&2; }
fail() {
  log "FAILED: $*"
  if [[ -s $LOG ]]; then
    log "last lines of $LOG:"
    tail -n 40 "$LOG" >&2
  fi
  exit 1
}

mkdir -p "$CACHE"
if [[ ! -x $VENV/bin/python ]]; then
  mkdir -p "$VENV"
  python3 -m venv "$VENV" >>"$LOG" 2>&1 || fail "python3 -m venv"
fi
if [[ "$(cat "$VENV/.okm-installed" 2>/dev/null)" != "$PIN" ]]; then
  log "installing $PIN into $VENV"
  # shellcheck disable=SC2086 # the pin is two requirements
  "$VENV/bin/pip" install -q --disable-pip-version-check $PIN >>"$LOG" 2>&1 ||
    fail "pip install $PIN (see $LOG)"
  echo "$PIN" >"$VENV/.okm-installed"
fi
got=$("$VENV/bin/componentize-py" --version 2>>"$LOG") || fail "componentize-py does not run"
"$VENV/bin/pytest" --version >>"$LOG" 2>&1 || fail "pytest does not run"
log "$got and pytest ready in $VENV"
echo "export OKM_COMPONENTIZE_PY=$VENV/bin/componentize-py"
echo "export OKM_PYTEST=$VENV/bin/pytest"
