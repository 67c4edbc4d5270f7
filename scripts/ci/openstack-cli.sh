#!/usr/bin/env bash
# Installs python-openstackclient + python-magnumclient from PyPI into a venv
# outside the repository and prints the export line for the end-to-end tests.
# Idempotent: a second run reuses the venv.
set -euo pipefail
CACHE=${OKM_CACHE:-$HOME/.cache/openkeel-magnum}
VENV=$CACHE/venv-cli
STAMP_WANT="osc=10.5.0 magnumclient=5.0.0"
mkdir -p "$CACHE"
if [[ "$(cat "$VENV/.okm-installed" 2>/dev/null)" != "$STAMP_WANT" ]]; then
  echo "openstack-cli: installing into $VENV" >&2
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    "python-openstackclient==10.5.0" "python-magnumclient==5.0.0" >&2
  echo "$STAMP_WANT" >"$VENV/.okm-installed"
fi
"$VENV/bin/openstack" --version >&2
echo "export OPENKEEL_TEST_OPENSTACK_CLI=$VENV/bin/openstack"
