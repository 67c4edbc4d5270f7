#!/usr/bin/env bash
# Side-by-side benchmark: the Rust host and the reference Magnum 23.0.0 API,
# on this machine, in one run, with the same MariaDB, the same Keystone, the
# same seed rows, the same token and the same load.
#
#   bench/run.sh                      # N = 100 1000 10000, 10 s per wrk run
#   BENCH_N="100" BENCH_DURATION=3s bench/run.sh
#
# Targets (BENCH_TARGETS, default "rust ref"):
#   rust  openkeel-magnum from host/ (cargo build --profile bench-release,
#         or BENCH_BIN)
#   rust-metrics  the same binary with [metrics] enabled, on its own
#         database with the same rows (RUST_PORT + 2, metrics on + 3 and + 4):
#         compare.py reports what the metrics cost per request
#   ref   the reference: ../shared/reference (Magnum 23.0.0 + Keystone +
#         MariaDB + RabbitMQ + memcached)
#
# What it does (everything on 127.0.0.1, every step bounded in time):
#  1. sets up and starts the reference with ../shared/reference/setup.sh
#     (idempotent; ANCHOR_DIR and the ports of its env.sh are respected;
#     MAGNUM_PERIODIC=false unless set, as in the reference's campaign);
#  2. builds the Rust binary unless BENCH_BIN is given (in the background,
#     while step 1 runs), gives it its own database in the reference's
#     MariaDB (`db upgrade`, or BENCH_SCHEMA=adopt:
#     spec/db/schema-mariadb.sql + `db adopt`), and starts its `api` on
#     RUST_PORT and its `reconciler`, with [keystone_authtoken] on the
#     reference's Keystone (service user magnum) and the fake driver enabled;
#  3. for every N: seeds every target's database with the reference's
#     gen_seed.py (same rows and UUIDs; our templates name the driver
#     "fake"), then
#     drives the services in the order of BENCH_TARGETS, endpoint by
#     endpoint:
#       read   wrk via the reference's load.sh (GET /, cluster lists, detail,
#              one cluster, its nodegroups, templates) at BENCH_CONNS; the
#              reference's lists of 1000 clusters take seconds each, so from
#              N >= BENCH_REF_SEQ_FROM they are timed one request at a time
#              with its slow.sh;
#       paging     walk the whole cluster list with limit=1000 (lib/paging.py);
#       templates  template create+delete pairs (lib/pairs.sh);
#       clusters   cluster create+delete pairs (lib/pairs.sh; last, as the
#                  reference's deleted clusters may stay listed until the
#                  next seed; ours are removed by `reconciler`, which runs
#                  beside `api` as magnum-conductor runs beside magnum-api);
#     while procmon.py samples CPU and memory of each service's processes;
#  4. prints one markdown table (lib/compare.py) with the raw figures and
#     the ratio Rust/ref, and writes it to $BENCH_OUT/table.md.
# On exit it stops the services and the reference components it started
# (BENCH_KEEP_REF=1 keeps the reference's).
#
# Environment (defaults in brackets):
#   BENCH_N ["100 1000 10000"]   BENCH_DURATION [10s]   BENCH_CONNS ["1 16"]
#   BENCH_REPS [1]               BENCH_THREADS [2]
#   BENCH_PHASES ["read paging templates clusters"]
#   BENCH_ENDPOINTS ["root clusters clusters_limit1000 clusters_detail
#                    cluster_get nodegroups templates"]
#   BENCH_TARGETS ["rust ref"]   BENCH_REF_SEQ_FROM [1000]
#   BENCH_PAGING_REPS [3]  BENCH_PAGING_BUDGET [300]  BENCH_REF_PAGING_BUDGET [150]
#   BENCH_SETUP [auto] (1: always setup.sh, 0: only start.sh, auto: setup.sh
#     unless every reference component already runs)   BENCH_KEEP_REF [0]   BENCH_MAX_TIME [10800]
#   BENCH_OUT [$ANCHOR_DIR/bench/<UTC time>]
#   BENCH_BIN (prebuilt Rust binary)
#   BENCH_PROFILE [bench-release]: the cargo profile of the Rust build (the
#     root Cargo.toml says how it differs from release)
#   BENCH_STUB_NODELAY [1]: serve the reference's Glance/Nova/Neutron stand-in
#     with TCP_NODELAY during the run (lib/os_stub_nodelay.py), 0: as it is
#   BENCH_SCHEMA [upgrade|adopt]  RUST_PORT [9611]
#   OKM_DB_NAME [openkeel_bench] (+ _rust)  OKM_DB_USER [openkeel_bench]
#   OKM_DB_PASS [openkeel-bench-db]  OKM_SPEC_DIR
#   REF_DIR [<repo>/../shared/reference]
set -euo pipefail
# the whole run is bounded: timeout sends TERM after BENCH_MAX_TIME seconds
# and the EXIT trap below stops what was started
if [[ -z ${BENCH_BOUNDED:-} ]]; then
  BENCH_BOUNDED=1 exec timeout --foreground --kill-after=300 "${BENCH_MAX_TIME:-10800}" "$0" "$@"
fi
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$BENCH")"
REF_DIR="$(cd "${REF_DIR:-$REPO/../shared/reference}" && pwd)"
export REF_DIR
# The reference's conductor health poll saturates it at 10000 clusters; the
# reference's own campaign measures with it off (RESULTS.md § 3.5).
export MAGNUM_PERIODIC=${MAGNUM_PERIODIC:-false}
# shellcheck source=/dev/null
source "$REF_DIR/env.sh"

BENCH_N=${BENCH_N:-100 1000 10000}
BENCH_DURATION=${BENCH_DURATION:-10s}
BENCH_CONNS=${BENCH_CONNS:-1 16}
BENCH_REPS=${BENCH_REPS:-1}
BENCH_THREADS=${BENCH_THREADS:-2}
BENCH_PHASES=${BENCH_PHASES:-read paging templates clusters}
BENCH_ENDPOINTS=${BENCH_ENDPOINTS:-root clusters clusters_limit1000 clusters_detail cluster_get nodegroups templates}
BENCH_TARGETS=${BENCH_TARGETS:-rust ref}
BENCH_REF_SEQ_FROM=${BENCH_REF_SEQ_FROM:-1000}
BENCH_PAGING_REPS=${BENCH_PAGING_REPS:-3}
BENCH_PAGING_BUDGET=${BENCH_PAGING_BUDGET:-300}
BENCH_REF_PAGING_BUDGET=${BENCH_REF_PAGING_BUDGET:-150}
BENCH_SETUP=${BENCH_SETUP:-auto}
BENCH_KEEP_REF=${BENCH_KEEP_REF:-0}
BENCH_MAX_TIME=${BENCH_MAX_TIME:-10800}
BENCH_SCHEMA=${BENCH_SCHEMA:-upgrade}
BENCH_PROFILE=${BENCH_PROFILE:-bench-release}
BENCH_STUB_NODELAY=${BENCH_STUB_NODELAY:-1}
BENCH_OUT=${BENCH_OUT:-$ANCHOR_DIR/bench/$(date -u +%Y%m%dT%H%M%SZ)}
RUST_PORT=${RUST_PORT:-${OKM_PORT:-9611}}
OKM_DB_NAME=${OKM_DB_NAME:-openkeel_bench}
OKM_DB_USER=${OKM_DB_USER:-openkeel_bench}
OKM_DB_PASS=${OKM_DB_PASS:-openkeel-bench-db}
OKM_SPEC_DIR=${OKM_SPEC_DIR:-$REPO/../shared/spec}
API_VERSION="container-infra latest"
QUOTA=1000000

mkdir -p "$BENCH_OUT"
BENCH_OUT="$(cd "$BENCH_OUT" && pwd)"
WORK="$BENCH_OUT/work"
mkdir -p "$WORK"
say() { echo "[bench $(date -u +%H:%M:%S)] $*" >&2; }
warn() { say "WARNING: $*"; }
# The Debian packages this script and the reference's scripts need: on a
# fresh machine they are installed when this runs as root with apt-get.
declare -A PKG_OF=([wrk]=wrk [mariadbd]=mariadb-server [mariadb-install-db]=mariadb-server
  [mariadb]=mariadb-client [curl]=curl [jq]=jq [bc]=bc)
missing=()
for cmd in "${!PKG_OF[@]}"; do command -v "$cmd" >/dev/null || missing+=("${PKG_OF[$cmd]}"); done
if ((${#missing[@]})); then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    say "installing the missing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -qq "${missing[@]}" || { apt-get update -qq && apt-get install -y -qq "${missing[@]}"; }; } \
      >"$WORK/apt.log" 2>&1 || { tail -20 "$WORK/apt.log" >&2; exit 1; }
  else
    echo "missing Debian packages: ${missing[*]} (install them, or run as root with apt-get)" >&2; exit 1
  fi
fi
for who in $BENCH_TARGETS; do
  case $who in rust | rust-metrics | ref) ;; *) echo "unknown target $who (rust, rust-metrics, ref)" >&2; exit 2 ;; esac
done
has() { [[ " $BENCH_TARGETS " == *" $1 "* ]]; }
ours_targets() { local w; for w in $BENCH_TARGETS; do [[ $w == ref ]] || echo "$w"; done; }

# ------------------------------------------------------------ cleanup (trap)
REF_COMPONENTS=(magnum conductor osstub keystone rabbitmq epmd memcached mariadb)
declare -A REF_WAS_UP=()
for c in "${REF_COMPONENTS[@]}"; do pid_alive "$c" && REF_WAS_UP[$c]=1; done
declare -A API_PID=() REC_PID=() PORT_OF=() DB_OF=()
PORT_OF[rust]=$RUST_PORT
DB_OF[rust]=${OKM_DB_NAME}_rust
PORT_OF[rust-metrics]=$((RUST_PORT + 2))
DB_OF[rust-metrics]=${OKM_DB_NAME}_rust_metrics
STUB_PID=""
BUILD_PID=""
kill_tree() { # pid: the process and its descendants, children first
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
  kill -TERM "$1" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [[ -n ${BUILD_PID:-} ]] && kill_tree "$BUILD_PID"
  if [[ -n $STUB_PID ]]; then
    kill -TERM -- "-$STUB_PID" 2>/dev/null || kill -TERM "$STUB_PID" 2>/dev/null
    sleep 0.5
    # give the reference its own stand-in back if it had one running
    [[ -n ${REF_WAS_UP[osstub]:-} ]] && "$REF_DIR/start.sh" osstub >/dev/null 2>&1
  fi
  local p
  for p in "${API_PID[@]}" "${REC_PID[@]}"; do
    kill -0 "$p" 2>/dev/null || continue
    say "stopping pid $p"
    kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null
    for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$p" 2>/dev/null || true
  done
  if [[ $BENCH_KEEP_REF != 1 ]]; then
    local stop=()
    for c in "${REF_COMPONENTS[@]}"; do
      [[ -z ${REF_WAS_UP[$c]:-} ]] && pid_alive "$c" && stop+=("$c")
    done
    if ((${#stop[@]})); then
      say "stopping the reference components this run started: ${stop[*]}"
      [[ " ${stop[*]} " == *" mariadb "* ]] && stop=("${stop[@]/mariadb/db}")
      "$REF_DIR/stop.sh" "${stop[@]}" || true
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'say "stopped (time limit or signal)"; exit 143' TERM

T0=$(date +%s)
# ------------------------------------------------------------ the binary
# Built while the reference is set up (its setup waits mostly on pip and on
# the database), into a log of its own.
RUST_BIN=${BENCH_BIN:-}
if has rust && [[ -z $RUST_BIN ]]; then
  say "building the Rust host (cargo build --profile $BENCH_PROFILE), in the background"
  profile_dir=$BENCH_PROFILE; [[ $profile_dir == dev ]] && profile_dir=debug
  RUST_BIN="${CARGO_TARGET_DIR:-$REPO/target}/$profile_dir/openkeel-magnum"
  [[ $RUST_BIN == /* ]] || RUST_BIN="$REPO/$RUST_BIN"
  (cd "$REPO" && OKM_GUEST_DRIVERS_ONLY=1 cargo build --profile "$BENCH_PROFILE" -p openkeel-magnum --bin openkeel-magnum) \
    >"$WORK/build-rust.log" 2>&1 ||
    { echo "Rust build failed" >>"$WORK/build-rust.log"; exit 1; } &
  BUILD_PID=$!
fi

# ------------------------------------------------------------ the reference
if [[ $BENCH_SETUP == auto ]]; then
  # a reference that already runs was set up: its setup.sh pass (minutes of
  # openstack CLI calls on a loaded machine) would only check that again
  BENCH_SETUP=0
  for c in magnum conductor keystone mariadb; do pid_alive "$c" || BENCH_SETUP=1; done
fi
if [[ $BENCH_SETUP == 1 ]]; then
  say "reference setup (idempotent; ANCHOR_DIR=$ANCHOR_DIR)"
  "$REF_DIR/setup.sh" >"$WORK/ref-setup.log" 2>&1 || { tail -20 "$WORK/ref-setup.log" >&2; exit 1; }
else
  "$REF_DIR/start.sh" >"$WORK/ref-start.log" 2>&1 || { tail -20 "$WORK/ref-start.log" >&2; exit 1; }
fi
grep -q "^periodic_enable = false" "$ETC/magnum/magnum.conf" ||
  warn "the reference runs with periodic_enable != false (set MAGNUM_PERIODIC=false and restart its conductor)"
if [[ $BENCH_STUB_NODELAY == 1 ]]; then
  # the same stand-in with TCP_NODELAY (lib/os_stub_nodelay.py), on the same port
  "$REF_DIR/stop.sh" osstub >/dev/null 2>&1 || true
  PYTHONDONTWRITEBYTECODE=1 setsid python3 "$BENCH/lib/os_stub_nodelay.py" "$REF_DIR/stub" "$ANCHOR_HOST" "$OS_STUB_PORT" \
    >>"$WORK/os-stub.log" 2>&1 </dev/null &
  STUB_PID=$!
  wait_http "http://$ANCHOR_HOST:$OS_STUB_PORT/image/v2" 30 || { echo "stand-in did not start" >&2; exit 1; }
fi
TOKEN=$("$REF_DIR/token.sh" anchor)
ADMIN_TOKEN=$("$REF_DIR/token.sh" admin)
[[ -n $TOKEN && -n $ADMIN_TOKEN ]] || { echo "could not get tokens from $KEYSTONE_URL" >&2; exit 1; }
ks_id() { # kind name -> id (Keystone API, admin token)
  curl -sf -m 30 -H "X-Auth-Token: $ADMIN_TOKEN" "$KEYSTONE_URL/$1?name=$2" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]][0]["id"])' "$1"
}
PROJECT_ID=$(ks_id projects anchor)
USER_ID=$(ks_id users anchor)
TPL_UUID=$(python3 -c 'import uuid,sys; print(uuid.uuid5(uuid.UUID("0b4e6e3a-6f1d-4d7e-9d2b-6a6e63686f72"), "template/"+sys.argv[1]))' "$PROJECT_ID")
CLUSTER_UUID=$(python3 -c 'import uuid,sys; print(uuid.uuid5(uuid.UUID("0b4e6e3a-6f1d-4d7e-9d2b-6a6e63686f72"), "cluster/%s/1" % sys.argv[1]))' "$PROJECT_ID")
export CLUSTER_UUID
say "reference up ($MAGNUM_URL, Keystone $KEYSTONE_URL); project anchor = $PROJECT_ID"

# ------------------------------------------------------------ our services
if [[ -n $BUILD_PID ]]; then
  say "waiting for the Rust build"
  wait "$BUILD_PID" || { tail -30 "$WORK/build-rust.log" >&2; echo "build failed" >&2; exit 1; }
  BUILD_PID=""
fi
conf_of() { echo "$WORK/openkeel-magnum-$1.conf"; }

# [drivers] precompiled_cache_dir: the Rust host keeps its compiled driver
# components where docs/drivers.md has operators keep them, so that the
# `reconciler` (and every later start) loads what the first `api` compiled.
write_conf() { # who
  local who=$1
  cat >"$(conf_of "$who")" <<CONF
[DEFAULT]
debug = false
host = openkeel-bench-$who

[api]
host = $ANCHOR_HOST
port = ${PORT_OF[$who]}

[database]
connection = mysql+pymysql://$OKM_DB_USER:$OKM_DB_PASS@$ANCHOR_HOST:$DB_PORT/${DB_OF[$who]}?charset=utf8mb4

[keystone_authtoken]
www_authenticate_uri = $KEYSTONE_URL
auth_url = $KEYSTONE_URL
auth_type = password
username = magnum
password = $MAGNUM_SERVICE_PASS
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = $REGION
interface = public

[keystone_auth]
auth_url = $KEYSTONE_URL
auth_type = password
username = magnum
password = $MAGNUM_SERVICE_PASS
project_name = service
user_domain_name = Default
project_domain_name = Default

[glance_client]
region_name = $REGION
endpoint_type = publicURL

[drivers]
enabled_beta_drivers = fake
precompiled_cache_dir = $WORK/rust-drivers-cache

[quotas]
max_clusters_per_project = $QUOTA
CONF
  if [[ $who == rust-metrics ]]; then
    # the reconciler's listener is moved by OS_METRICS__PORT (start_ours)
    printf '\n[metrics]\nenabled = true\nhost = %s\nport = %s\n' "$ANCHOR_HOST" $((RUST_PORT + 3)) \
      >>"$(conf_of "$who")"
  fi
}
okm() { local who=$1; shift; timeout 120 "$RUST_BIN" "$@" --config-file "$(conf_of "$who")"; }
okmdb() { # who mariadb-args...
  local who=$1; shift
  mariadb --no-defaults -h "$ANCHOR_HOST" -P "$DB_PORT" -u "$OKM_DB_USER" -p"$OKM_DB_PASS" "${DB_OF[$who]}" "$@"
}
schema_ready() { okm "$1" db version 2>/dev/null | grep -q "schema version is [1-9]"; }

start_ours() { # who: its database, schema, api and reconciler
  local who=$1 url="http://$ANCHOR_HOST:${PORT_OF[$1]}" log="$WORK/$1"
  dbroot <<SQL
CREATE DATABASE IF NOT EXISTS \`${DB_OF[$who]}\` CHARACTER SET utf8mb4;
CREATE USER IF NOT EXISTS '$OKM_DB_USER'@'127.0.0.1' IDENTIFIED BY '$OKM_DB_PASS';
CREATE USER IF NOT EXISTS '$OKM_DB_USER'@'localhost' IDENTIFIED BY '$OKM_DB_PASS';
GRANT ALL PRIVILEGES ON \`${DB_OF[$who]}\`.* TO '$OKM_DB_USER'@'127.0.0.1', '$OKM_DB_USER'@'localhost';
FLUSH PRIVILEGES;
SQL
  write_conf "$who"
  if ! schema_ready "$who"; then
    case $BENCH_SCHEMA in
      upgrade)
        say "$who: creating the schema with db upgrade"
        okm "$who" db upgrade >"$log-db-upgrade.log" 2>&1 || { cat "$log-db-upgrade.log" >&2; exit 1; } ;;
      adopt)
        say "$who: loading spec/db/schema-mariadb.sql at Alembic b3e1cf4a2d5e and adopting it"
        okmdb "$who" -e "source $OKM_SPEC_DIR/db/schema-mariadb.sql;
          DELETE FROM alembic_version; INSERT INTO alembic_version VALUES ('b3e1cf4a2d5e');"
        okm "$who" db adopt >"$log-db-adopt.log" 2>&1 || { cat "$log-db-adopt.log" >&2; exit 1; } ;;
      *) echo "BENCH_SCHEMA must be upgrade or adopt" >&2; exit 2 ;;
    esac
  fi
  port_busy "${PORT_OF[$who]}" && { echo "port ${PORT_OF[$who]} is taken (RUST_PORT)" >&2; exit 1; }
  setsid "$RUST_BIN" api --config-file "$(conf_of "$who")" >>"$log-api.log" 2>&1 </dev/null &
  API_PID[$who]=$!
  if ! { wait_http "$url/" 60 && kill -0 "${API_PID[$who]}" 2>/dev/null; }; then
    tail -20 "$log-api.log" >&2; echo "$who api did not start" >&2; exit 1
  fi
  # the background work, as the reference runs magnum-conductor beside
  # magnum-api: it completes the deletes of the create+delete pairs
  OS_METRICS__PORT=$((RUST_PORT + 4)) \
    setsid "$RUST_BIN" reconciler --config-file "$(conf_of "$who")" >>"$log-reconciler.log" 2>&1 </dev/null &
  REC_PID[$who]=$!
  sleep 1
  kill -0 "${REC_PID[$who]}" 2>/dev/null || {
    tail -20 "$log-reconciler.log" >&2; echo "$who reconciler did not start" >&2; exit 1
  }
  if [[ $who == rust-metrics ]]; then
    curl -fsS -m 10 "http://$ANCHOR_HOST:$((RUST_PORT + 3))/metrics" | grep -q '^openkeel_magnum_http_requests_total' ||
      { echo "$who serves no request metrics" >&2; exit 1; }
  fi
  say "$who up on $url (api pid ${API_PID[$who]}, reconciler pid ${REC_PID[$who]})"
}
for who in $(ours_targets); do start_ours "$who"; done
# one authenticated request each, so that no service's first measured
# request pays the token validation in Keystone
for who in $BENCH_TARGETS; do
  if [[ $who == ref ]]; then u=$MAGNUM_URL; else u="http://$ANCHOR_HOST:${PORT_OF[$who]}"; fi
  curl -s -m 120 -o /dev/null -H "X-Auth-Token: $TOKEN" -H "OpenStack-API-Version: $API_VERSION" \
    "$u/v1/clustertemplates" || true
done

# ------------------------------------------------------------ helpers
pg() { cat "$PIDS/$1.pid" 2>/dev/null; }
ref_mon() {
  local m="" n
  for n in magnum conductor rabbitmq epmd memcached keystone mariadb; do
    pid_alive "$n" && m+=" $n:$(pg "$n")"
  done
  echo "$m"
}
ours_mon() { # who
  local m="$1:${API_PID[$1]} $1-reconciler:${REC_PID[$1]}" n
  for n in keystone mariadb; do pid_alive "$n" && m+=" $n:$(pg "$n")"; done
  echo "$m"
}
ref_groups() {
  local g="" n
  for n in magnum conductor rabbitmq; do pid_alive "$n" && g+=" $(pg "$n")"; done
  echo "$g"
}
drain_ref() { # the forking reference keeps serving queued requests after wrk stops
  # shellcheck disable=SC2046
  python3 "$BENCH/lib/waitidle.py" --timeout 180 $(ref_groups) || true
}
url_of() { if [[ $1 == ref ]]; then echo "$MAGNUM_URL"; else echo "http://$ANCHOR_HOST:${PORT_OF[$1]}"; fi; }
mon_of() { if [[ $1 == ref ]]; then ref_mon; else ours_mon "$1"; fi; }
is_list() { [[ $1 == clusters || $1 == clusters_limit1000 || $1 == clusters_detail ]]; }

set_quota() { # url: a Cluster quota large enough for the create pairs
  local url=$1 code
  code=$(curl -s -m 60 -o "$WORK/quota.json" -w '%{http_code}' -X POST -H "X-Auth-Token: $ADMIN_TOKEN" \
    -H "OpenStack-API-Version: $API_VERSION" -H 'Content-Type: application/json' "$url/v1/quotas" \
    -d "{\"project_id\": \"$PROJECT_ID\", \"resource\": \"Cluster\", \"hard_limit\": $QUOTA}")
  if [[ $code == 409 ]]; then
    curl -s -m 60 -o /dev/null -X DELETE -H "X-Auth-Token: $ADMIN_TOKEN" \
      -H "OpenStack-API-Version: $API_VERSION" "$url/v1/quotas/$PROJECT_ID/Cluster"
    code=$(curl -s -m 60 -o "$WORK/quota.json" -w '%{http_code}' -X POST -H "X-Auth-Token: $ADMIN_TOKEN" \
      -H "OpenStack-API-Version: $API_VERSION" -H 'Content-Type: application/json' "$url/v1/quotas" \
      -d "{\"project_id\": \"$PROJECT_ID\", \"resource\": \"Cluster\", \"hard_limit\": $QUOTA}")
  fi
  [[ $code == 201 ]] || warn "quota on $url answered $code: $(head -c 300 "$WORK/quota.json")"
}

seed() { # N
  local n=$1 t0 who sql="$WORK/seed-ours-$1.sql"
  if has ref; then
    SEED_PROJECT_ID=$PROJECT_ID SEED_USER_ID=$USER_ID "$REF_DIR/seed.sh" "$n" 2>&1 | sed 's/^/  ref: /' >&2
  fi
  [[ -n $(ours_targets) ]] || return 0
  python3 "$REF_DIR/gen_seed.py" --clusters "$n" --project-id "$PROJECT_ID" --user-id "$USER_ID" \
    --driver fake >"$sql"
  for who in $(ours_targets); do
    t0=$(date +%s.%N)
    okmdb "$who" -e "source $sql; ANALYZE TABLE cluster, nodegroup, cluster_template;" >/dev/null
    say "  $who: seeded $n clusters in $(printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)") s"
  done
  rm -f "$sql"
}

cat >"$WORK/template-body.json" <<'JSON'
{"name": "bench-tpl", "coe": "kubernetes",
 "image_id": "5f0f1bd2-4c0a-4f5c-9c55-0a1e0d7a1a01",
 "flavor_id": "m1.large", "master_flavor_id": "m1.medium",
 "external_network_id": "public", "network_driver": "calico",
 "docker_volume_size": 50, "master_lb_enabled": true, "floating_ip_enabled": false,
 "labels": {"kube_tag": "v1.30.4", "boot_volume_size": "40"}}
JSON
cat >"$WORK/cluster-body.json" <<JSON
{"cluster_template_id": "$TPL_UUID", "master_count": 1, "node_count": 1,
 "keypair": "ops-key", "create_timeout": 60}
JSON

python3 - "$BENCH_OUT/meta.json" "$BENCH_DURATION" "$BENCH_REPS" "$BENCH_CONNS" "$BENCH_N" "$BENCH_TARGETS" <<'PY'
import json, os, platform, subprocess, sys, time
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem = int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal"))) / 1048576
json.dump({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "machine": "%d cores (%s), %.1f GiB RAM, %s %s" % (os.cpu_count(), model, mem, platform.system(), platform.release()),
           "load_start": open("/proc/loadavg").read().split()[:3],
           "duration": sys.argv[2], "reps": sys.argv[3], "conns": sys.argv[4], "n": sys.argv[5],
           "targets": sys.argv[6]},
          open(sys.argv[1], "w"))
PY

# ------------------------------------------------------------ the campaign
for N in $BENCH_N; do
  say "=== N=$N"
  seed "$N"
  for who in $BENCH_TARGETS; do set_quota "$(url_of "$who")"; done
  for who in $BENCH_TARGETS; do mkdir -p "$BENCH_OUT/N$N/$who"; done

  if [[ " $BENCH_PHASES " == *" read "* ]]; then
    for ep in $BENCH_ENDPOINTS; do
      for c in $BENCH_CONNS; do
        for who in $BENCH_TARGETS; do
          out="$BENCH_OUT/N$N/$who"
          if [[ $who == ref ]] && is_list "$ep" && ((N >= BENCH_REF_SEQ_FROM)); then
            # one list of 1000 clusters takes seconds: time it request by request, once
            [[ $c == "${BENCH_CONNS%% *}" ]] || continue
            REPS=$BENCH_REPS MAX_TIME=180 ENDPOINTS=$ep LABEL="ref N=$N" \
              "$REF_DIR/slow.sh" "$MAGNUM_URL" "$TOKEN" "$out" || warn "slow.sh $ep failed on ref"
          else
            DURATION=$BENCH_DURATION CONNS=$c THREADS=$BENCH_THREADS REPS=$BENCH_REPS TIMEOUT=60s \
              ENDPOINTS=$ep MONITOR="$(mon_of "$who")" LABEL="$who N=$N" \
              "$REF_DIR/load.sh" "$(url_of "$who")" "$TOKEN" "$out" >/dev/null ||
              warn "load.sh $ep c=$c failed on $who"
            if [[ $who == ref ]] && is_list "$ep" && [[ -s $out/results.jsonl ]] &&
              [[ $(tail -1 "$out/results.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("requests", 0))') == 0 ]] &&
              ! grep -q "\"$ep (sequential)\"" "$out/results.jsonl"; then
              # no request completed within the run: time it request by request
              drain_ref
              REPS=$BENCH_REPS MAX_TIME=180 ENDPOINTS=$ep LABEL="ref N=$N" \
                "$REF_DIR/slow.sh" "$MAGNUM_URL" "$TOKEN" "$out" || warn "slow.sh $ep failed on ref"
            fi
          fi
          [[ $who == ref ]] && drain_ref
        done
      done
    done
  fi

  if [[ " $BENCH_PHASES " == *" paging "* ]]; then
    for who in $BENCH_TARGETS; do
      if [[ $who != ref ]]; then reps=$BENCH_PAGING_REPS budget=$BENCH_PAGING_BUDGET
      else reps=1 budget=$BENCH_REF_PAGING_BUDGET; fi
      python3 "$BENCH/lib/paging.py" "$(url_of "$who")" "$TOKEN" --label "$who N=$N" --limit 1000 \
        --reps "$reps" --budget "$budget" --page-timeout 120 >>"$BENCH_OUT/N$N/$who/paging.jsonl" ||
        warn "paging failed on $who"
      [[ $who == ref ]] && drain_ref
    done
  fi

  for kind in templates clusters; do
    [[ " $BENCH_PHASES " == *" $kind "* ]] || continue
    body="$WORK/template-body.json"; [[ $kind == clusters ]] && body="$WORK/cluster-body.json"
    for who in $BENCH_TARGETS; do
      drain=""; [[ $who == ref ]] && drain="$(ref_groups)"
      BODY_FILE=$body DURATION=$BENCH_DURATION CONNS=$BENCH_CONNS THREADS=$BENCH_THREADS \
        REPS=$BENCH_REPS MONITOR="$(mon_of "$who")" LABEL="$who N=$N" DRAIN_PGIDS="$drain" \
        "$BENCH/lib/pairs.sh" "$kind" "$(url_of "$who")" "$TOKEN" "$BENCH_OUT/N$N/$who" ||
        warn "$kind pairs failed on $who"
    done
  done

done

python3 - "$BENCH_OUT/meta.json" "$(( $(date +%s) - T0 ))" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["load_end"] = open("/proc/loadavg").read().split()[:3]
m["wall_s"] = int(sys.argv[2])
json.dump(m, open(sys.argv[1], "w"))
PY
python3 "$BENCH/lib/compare.py" "$BENCH_OUT" >"$BENCH_OUT/table.md"
say "done in $(( $(date +%s) - T0 )) s; results in $BENCH_OUT"
cat "$BENCH_OUT/table.md"
