#!/usr/bin/env bash
# Installs and starts a real Keystone 30.0.0 for the integration tests of
# the host's auth module, the black-box suites and the client suites.
#
#   eval "$(scripts/ci/keystone.sh)"
#
# - venv:     ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/venv-keystone
#             (pinned by scripts/ci/keystone-constraints.txt)
# - state:    .../keystone/{keystone.conf,keystone.db,fernet-keys,...}
# - log:      .../keystone/keystone.log (the tail is printed on failure)
# - server:   gunicorn on 127.0.0.1:15000, pid in .../keystone/keystone.pid
#
# Identities (all in domain Default, region RegionOne):
#   admin / $OKM_KEYSTONE_ADMIN_PASSWORD      admin of project admin, admin on
#                                             the system and on domain Default
#   magnum / $OKM_KEYSTONE_MAGNUM_PASSWORD    admin of project service
#   demo / $OKM_KEYSTONE_DEMO_PASSWORD        member + reader of project demo
#   alt / $OKM_KEYSTONE_ALT_PASSWORD          member of project alt
# Catalog: container-infra (name magnum) -> http://127.0.0.1:$OKM_MAGNUM_PORT/v1
#
# Idempotent: a second run reuses the venv, the database and a server that is
# already running. Only `export VAR=...` lines go to stdout; progress goes to
# stderr. Stop the server with: kill "$(cat .../keystone/keystone.pid)".
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
VENV="$CACHE/venv-keystone"
STATE="$CACHE/keystone"
LOG="$STATE/keystone.log"
PIDFILE="$STATE/keystone.pid"
HOST=127.0.0.1
PORT=${OKM_KEYSTONE_PORT:-15000} # fixed at 15000 in CI; override only for experiments
URL="http://$HOST:$PORT/v3"
MAGNUM_URL="http://$HOST:${OKM_MAGNUM_PORT:-9511}/v1"
REGION=RegionOne
KEYSTONE_VERSION=30.0.0
GUNICORN_VERSION=27.0.1
ADMIN_PASSWORD="${OKM_KEYSTONE_ADMIN_PASSWORD:-admin-pass}"
MAGNUM_PASSWORD="${OKM_KEYSTONE_MAGNUM_PASSWORD:-magnum-pass}"
DEMO_PASSWORD="${OKM_KEYSTONE_DEMO_PASSWORD:-demo-pass}"
ALT_PASSWORD="${OKM_KEYSTONE_ALT_PASSWORD:-alt-pass}"
START=$SECONDS

mkdir -p "$STATE"
log() { echo "[keystone.sh] $*" >&2; }
# One run at a time (the server started below does not inherit the lock).
exec 9>"$STATE/.lock"
if ! flock -w 600 9; then
  log "FAILED: another keystone.sh has held $STATE/.lock for 10 minutes"
  exit 1
fi
fail() {
  log "FAILED: $*"
  if [[ -s $LOG ]]; then
    log "last lines of $LOG:"
    tail -n 40 "$LOG" >&2
  fi
  exit 1
}
trap 'fail "command failed at line $LINENO"' ERR

# ------------------------------------------------------------------ python
pick_python() {
  local p
  for p in "${OKM_PYTHON:-}" python3.11 python3.12 python3.13 python3; do
    [[ -n $p ]] || continue
    command -v "$p" >/dev/null 2>&1 || continue
    "$p" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && {
      echo "$p"
      return 0
    }
  done
  return 1
}
if [[ ! -x $VENV/bin/python ]]; then
  PY=$(pick_python) || {
    log "no Python >= 3.11 with venv; installing python3-venv from Debian"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv; } >>"$LOG" 2>&1 ||
      fail "could not install python3-venv"
    PY=$(pick_python) || fail "Keystone $KEYSTONE_VERSION needs Python >= 3.11 with the venv module"
  }
  log "creating venv $VENV with $PY"
  "$PY" -m venv "$VENV" >>"$LOG" 2>&1 || fail "python -m venv"
fi

# Reinstall only when the pins change.
PIN_HASH=$( { echo "keystone==$KEYSTONE_VERSION gunicorn==$GUNICORN_VERSION"; cat "$HERE/keystone-constraints.txt"; } |
  sha256sum | cut -c1-16)
if [[ "$(cat "$VENV/.okm-installed" 2>/dev/null)" != "$PIN_HASH" ]]; then
  log "installing keystone==$KEYSTONE_VERSION gunicorn==$GUNICORN_VERSION into $VENV (takes a minute or two)"
  "$VENV/bin/pip" install -q --disable-pip-version-check -c "$HERE/keystone-constraints.txt" \
    "keystone==$KEYSTONE_VERSION" "gunicorn==$GUNICORN_VERSION" >>"$LOG" 2>&1 ||
    fail "pip install (see $LOG)"
  echo "$PIN_HASH" >"$VENV/.okm-installed"
fi
"$VENV/bin/python" -c 'import keystone' 2>>"$LOG" || fail "keystone is not importable from $VENV"

# ------------------------------------------------------------ configuration
mkdir -p "$STATE/fernet-keys" "$STATE/credential-keys"
chmod 700 "$STATE/fernet-keys" "$STATE/credential-keys"
# bcrypt at its minimum cost: a throw-away test Keystone, where every
# password authentication would otherwise cost ~0.3 s of CPU.
cat >"$STATE/keystone.conf.new" <<EOF
[DEFAULT]
debug = false
log_file = $LOG
[database]
connection = sqlite:///$STATE/keystone.db
[token]
provider = fernet
expiration = 3600
[fernet_tokens]
key_repository = $STATE/fernet-keys
[credential]
key_repository = $STATE/credential-keys
[cache]
enabled = false
[identity]
password_hash_rounds = 4
EOF
# keystone.server.flask parses sys.argv with oslo.config: under gunicorn it
# holds gunicorn's options, so the entry point resets it first.
cat >"$STATE/okm_keystone_wsgi.py" <<'EOF'
import sys

sys.argv = ["keystone"]

from keystone.wsgi.api import application  # noqa: E402,F401
EOF

KM=("$VENV/bin/keystone-manage" --config-file "$STATE/keystone.conf")
export OS_KEYSTONE_CONFIG_FILES="$STATE/keystone.conf"

answers() { # 0 when a Keystone v3 answers on $URL
  curl -s -m 2 "$URL" 2>/dev/null | grep -q '"id": *"v3'
}
pid_alive() { [[ -s $PIDFILE ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

# A Keystone of this state directory started again by someone else (the
# fault suite restarts it as it ran, tests/clients/faults/outage.rs) has
# another pid: the master gunicorn (the oldest process of that command
# line) is adopted.
if ! pid_alive; then
  master=$(pgrep -of -- "--bind $HOST:$PORT .*--chdir $STATE " || true)
  if [[ -n $master ]]; then
    log "adopting keystone pid $master (started again outside this script)"
    echo "$master" >"$PIDFILE"
  fi
fi

# A changed configuration restarts the server that this script started.
if ! cmp -s "$STATE/keystone.conf.new" "$STATE/keystone.conf"; then
  if pid_alive; then
    log "configuration changed: stopping keystone (pid $(cat "$PIDFILE"))"
    kill "$(cat "$PIDFILE")"
    for ((i = 0; i < 60; i++)); do pid_alive || break; sleep 0.5; done
    pid_alive && fail "keystone (pid $(cat "$PIDFILE")) did not stop"
  fi
  mv "$STATE/keystone.conf.new" "$STATE/keystone.conf"
else
  rm -f "$STATE/keystone.conf.new"
fi

if pid_alive && ! answers; then
  log "keystone (pid $(cat "$PIDFILE")) runs but does not answer yet; waiting"
  for ((i = 0; i < 120; i++)); do
    answers && break
    sleep 0.5
  done
  answers || fail "keystone (pid $(cat "$PIDFILE")) does not answer on $URL; stop it with: kill $(cat "$PIDFILE")"
fi
if pid_alive && answers; then
  log "keystone already running (pid $(cat "$PIDFILE")), reusing it"
else
  if (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then
    fail "port $PORT is taken by another program (not the Keystone recorded in $PIDFILE)"
  fi
  if [[ ! -s $STATE/keystone.db ]] || ! "${KM[@]}" db_version >/dev/null 2>>"$LOG"; then
    log "keystone-manage db_sync (sqlite $STATE/keystone.db)"
    "${KM[@]}" db_sync >>"$LOG" 2>&1 || fail "keystone-manage db_sync"
  fi
  [[ -e $STATE/fernet-keys/0 ]] ||
    "${KM[@]}" fernet_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)" >>"$LOG" 2>&1 ||
    fail "keystone-manage fernet_setup"
  [[ -e $STATE/credential-keys/0 ]] ||
    "${KM[@]}" credential_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)" >>"$LOG" 2>&1 ||
    fail "keystone-manage credential_setup"
  # bootstrap is idempotent: admin user/project, roles admin/member/reader,
  # system role assignment, region and the identity endpoints.
  "${KM[@]}" bootstrap --bootstrap-password "$ADMIN_PASSWORD" \
    --bootstrap-admin-url "$URL" --bootstrap-internal-url "$URL" --bootstrap-public-url "$URL" \
    --bootstrap-region-id "$REGION" >>"$LOG" 2>&1 || fail "keystone-manage bootstrap"

  log "starting keystone on $HOST:$PORT"
  setsid "$VENV/bin/gunicorn" --workers "${OKM_KEYSTONE_WORKERS:-2}" --bind "$HOST:$PORT" \
    --timeout 120 --no-control-socket --chdir "$STATE" --pythonpath "$STATE" \
    okm_keystone_wsgi:application >>"$LOG" 2>&1 </dev/null 9>&- &
  echo $! >"$PIDFILE"
  for ((i = 0; i < 240; i++)); do
    answers && break
    pid_alive || fail "gunicorn exited"
    sleep 0.5
  done
  answers || fail "keystone did not answer on $URL within 120 s"
  log "keystone answers (pid $(cat "$PIDFILE"))"
fi

# ------------------------------------------- projects, users, roles, catalog
# Idempotent provisioning through the Keystone API (standard library only).
OKM_URL="$URL" OKM_STATE="$STATE" OKM_REGION="$REGION" OKM_MAGNUM_ENDPOINT="$MAGNUM_URL" \
  OKM_ADMIN_PASSWORD="$ADMIN_PASSWORD" OKM_MAGNUM_PASSWORD="$MAGNUM_PASSWORD" \
  OKM_DEMO_PASSWORD="$DEMO_PASSWORD" OKM_ALT_PASSWORD="$ALT_PASSWORD" \
  "$VENV/bin/python" - >>"$LOG" 2>&1 <<'PYEOF' || fail "provisioning users, projects and catalog"
import hashlib
import json
import os
import time
import urllib.error
import urllib.request

URL = os.environ["OKM_URL"]


def call(method, path, body=None, token=None, ok=(200, 201, 204)):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(URL + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("X-Auth-Token", token)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
            return resp.status, resp.headers, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as e:
        if e.code in ok:
            return e.code, e.headers, None
        raise SystemExit(f"{method} {path}: HTTP {e.code}: {e.read()[:300]!r}")


def admin_token():
    _, hdrs, _ = call("POST", "/auth/tokens", {"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"},
            "password": os.environ["OKM_ADMIN_PASSWORD"]}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
    return hdrs["X-Subject-Token"]


def scoped_token(user, password, project):
    _, hdrs, body = call("POST", "/auth/tokens", {"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": user, "domain": {"id": "default"}, "password": password}}},
        "scope": {"project": {"name": project, "domain": {"id": "default"}}}}})
    return body["token"]


# Fast path for a second run: when this state was provisioned with the same
# settings, three logins (whose roles and catalog are checked) suffice.
FINGERPRINT = hashlib.sha256("|".join(os.environ[k] for k in (
    "OKM_REGION", "OKM_MAGNUM_ENDPOINT", "OKM_ADMIN_PASSWORD", "OKM_MAGNUM_PASSWORD",
    "OKM_DEMO_PASSWORD", "OKM_ALT_PASSWORD")).encode()).hexdigest()
MARKER = os.environ["OKM_STATE"] + "/provisioned"


def already_provisioned():
    try:
        with open(MARKER) as f:
            if f.read().strip() != FINGERPRINT:
                return False
        roles = lambda tok: sorted(r["name"] for r in tok["roles"])
        demo = scoped_token("demo", os.environ["OKM_DEMO_PASSWORD"], "demo")
        urls = sorted(e["url"] for s in demo["catalog"] if s["type"] == "container-infra"
                      for e in s["endpoints"])
        return ("member" in roles(demo) and "reader" in roles(demo)
                and urls == [os.environ["OKM_MAGNUM_ENDPOINT"]] * 3
                and "admin" in roles(scoped_token("magnum", os.environ["OKM_MAGNUM_PASSWORD"], "service"))
                and "member" in roles(scoped_token("alt", os.environ["OKM_ALT_PASSWORD"], "alt")))
    except (OSError, SystemExit, KeyError, TypeError):
        return False


if already_provisioned():
    print("already provisioned")
    raise SystemExit(0)

TOKEN = admin_token()


def find(coll, key, **filters):
    q = "&".join(f"{k}={v}" for k, v in filters.items())
    _, _, body = call("GET", f"/{coll}?{q}", token=TOKEN)
    return body[key]


def ensure_project(name):
    found = find("projects", "projects", name=name, domain_id="default")
    if found:
        return found[0]["id"]
    _, _, b = call("POST", "/projects", {"project": {
        "name": name, "domain_id": "default", "enabled": True}}, token=TOKEN)
    return b["project"]["id"]


def password_works(name, password):
    try:
        call("POST", "/auth/tokens", {"auth": {"identity": {
            "methods": ["password"], "password": {"user": {
                "name": name, "domain": {"id": "default"}, "password": password}}}}},
             ok=(201,))
        return True
    except SystemExit:
        return False


# Passwords are (re)set once per state directory, so that they are hashed at
# the configured cost; later runs only check them, because a password change
# revokes the user's tokens (which tests running elsewhere may hold).
REHASHED = os.path.exists(os.environ["OKM_STATE"] + "/passwords-set")


def ensure_user(name, password):
    global TOKEN
    found = find("users", "users", name=name, domain_id="default")
    if found:
        uid = found[0]["id"]
        if not REHASHED or not password_works(name, password):
            call("PATCH", f"/users/{uid}", {"user": {"password": password,
                                                       "enabled": True}}, token=TOKEN)
            if name == "admin":
                # The change revoked the admin's tokens issued up to now,
                # at the one-second resolution of fernet tokens.
                time.sleep(1.5)
                TOKEN = admin_token()
        return uid
    _, _, b = call("POST", "/users", {"user": {
        "name": name, "domain_id": "default", "password": password,
        "enabled": True}}, token=TOKEN)
    return b["user"]["id"]


def role_id(name):
    found = find("roles", "roles", name=name)
    if not found:
        raise SystemExit(f"role {name} missing (bootstrap should create it)")
    return found[0]["id"]


def grant(target, target_id, user_id, role):
    call("PUT", f"/{target}/{target_id}/users/{user_id}/roles/{role_id(role)}",
         token=TOKEN)


admin_id = ensure_user("admin", os.environ["OKM_ADMIN_PASSWORD"])
grant("domains", "default", admin_id, "admin")

service = ensure_project("service")
demo = ensure_project("demo")
alt = ensure_project("alt")
grant("projects", service, ensure_user("magnum", os.environ["OKM_MAGNUM_PASSWORD"]), "admin")
demo_user = ensure_user("demo", os.environ["OKM_DEMO_PASSWORD"])
grant("projects", demo, demo_user, "member")
grant("projects", demo, demo_user, "reader")
grant("projects", alt, ensure_user("alt", os.environ["OKM_ALT_PASSWORD"]), "member")

services = find("services", "services", type="container-infra")
if services:
    svc = services[0]["id"]
else:
    _, _, b = call("POST", "/services", {"service": {
        "type": "container-infra", "name": "magnum", "enabled": True,
        "description": "Container Infrastructure Management Service"}}, token=TOKEN)
    svc = b["service"]["id"]
endpoint = os.environ["OKM_MAGNUM_ENDPOINT"]
region = os.environ["OKM_REGION"]
for iface in ("public", "internal", "admin"):
    eps = find("endpoints", "endpoints", service_id=svc, interface=iface)
    if not eps:
        call("POST", "/endpoints", {"endpoint": {
            "service_id": svc, "interface": iface, "url": endpoint,
            "region_id": region, "enabled": True}}, token=TOKEN)
    elif eps[0]["url"] != endpoint:
        call("PATCH", f"/endpoints/{eps[0]['id']}", {"endpoint": {"url": endpoint}},
             token=TOKEN)
open(os.environ["OKM_STATE"] + "/passwords-set", "w").close()
with open(MARKER, "w") as f:
    f.write(FINGERPRINT + "\n")
print("provisioned: projects service/demo/alt, users magnum/demo/alt, container-infra endpoints")
PYEOF

log "ready in $((SECONDS - START)) s (log: $LOG)"
trap - ERR
cat <<EOF
export OPENKEEL_TEST_KEYSTONE_URL=$URL
export OPENKEEL_TEST_KEYSTONE_ADMIN_PASSWORD=$ADMIN_PASSWORD
export OPENKEEL_TEST_KEYSTONE_MAGNUM_PASSWORD=$MAGNUM_PASSWORD
export OPENKEEL_TEST_KEYSTONE_DEMO_PASSWORD=$DEMO_PASSWORD
export OPENKEEL_TEST_KEYSTONE_ALT_PASSWORD=$ALT_PASSWORD
EOF
