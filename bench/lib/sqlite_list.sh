#!/usr/bin/env bash
# The list path of a built openkeel-magnum on SQLite: N clusters (2
# nodegroups each) from the reference's gen_seed.py in a SQLite file,
# `openkeel-magnum api` without authentication on it, and wrk at one
# connection on `GET /v1/clusters?limit=1000` and `GET /v1/clusters/detail`
# (a page of 1000): read + render through the real server, p50 and p99.
#
#   sqlite_list.sh BIN [OUTDIR]
#
# Env: N [1000]  DURATION [10s]  CONNS ["1"]  PORT [9619]  REPS [1]
#      REF_DIR [<repo>/../shared/reference]
# Appends load.sh's JSON lines to OUTDIR/results.jsonl (default: a
# temporary directory, removed at the end) and prints its summary.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
BIN=${1:?usage: sqlite_list.sh BIN [OUTDIR]}
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
REF_DIR="$(cd "${REF_DIR:-$REPO/../shared/reference}" && pwd)"
N=${N:-1000}
PORT=${PORT:-9619}
WORK="$(mktemp -d)"
OUT=${2:-$WORK/out}
mkdir -p "$OUT"
API_PID=""
cleanup() {
  [[ -n $API_PID ]] && kill -TERM "$API_PID" 2>/dev/null && wait "$API_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/okm.conf" <<CONF
[DEFAULT]
auth_strategy = noauth

[api]
host = 127.0.0.1
port = $PORT

[database]
connection = sqlite:///$WORK/okm.sqlite

[drivers]
enabled_beta_drivers = fake
CONF
"$BIN" db upgrade --config-file "$WORK/okm.conf" >"$WORK/db-upgrade.log" 2>&1 ||
  { cat "$WORK/db-upgrade.log" >&2; exit 1; }
# the caller without authentication is project openkeel-project
python3 "$REF_DIR/gen_seed.py" --clusters "$N" --project-id openkeel-project \
  --user-id openkeel-user --driver fake >"$WORK/seed.sql"
python3 - "$WORK/okm.sqlite" "$WORK/seed.sql" <<'PY'
import sqlite3, sys
sql = open(sys.argv[2]).read()
for mysql_only in ("SET NAMES utf8mb4;", "START TRANSACTION;"):
    sql = sql.replace(mysql_only, "")
db = sqlite3.connect(sys.argv[1])
db.executescript("BEGIN;" + sql.replace("COMMIT;", "") + "COMMIT; ANALYZE;")
db.close()
PY
setsid "$BIN" api --config-file "$WORK/okm.conf" >"$WORK/api.log" 2>&1 </dev/null &
API_PID=$!
for _ in $(seq 60); do curl -s -o /dev/null -m 2 "http://127.0.0.1:$PORT/" && break; sleep 1; done
kill -0 "$API_PID" 2>/dev/null || { cat "$WORK/api.log" >&2; exit 1; }
DURATION=${DURATION:-10s} CONNS=${CONNS:-1} THREADS=1 REPS=${REPS:-1} TIMEOUT=60s \
  ENDPOINTS="clusters_limit1000 clusters_detail" CLUSTER_UUID=unused \
  MONITOR="api:$API_PID" LABEL="rust sqlite N=$N" \
  "$REF_DIR/load.sh" "http://127.0.0.1:$PORT" unused "$OUT" >/dev/null
python3 - "$OUT/results.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    mon = d.get("monitor", {}).get("api", {})
    cpu = 1000.0 * mon.get("cpu_s", 0) / max(d.get("requests") or 1, 1)
    print("%-20s c=%-3d %8.1f req/s  p50 %.1f ms  p99 %.1f ms  %.2f ms CPU/req  %d items  codes %s" % (
        d["endpoint"], d["conns"], d["rps"], d["lat_ms"]["p50"], d["lat_ms"]["p99"], cpu,
        (d.get("probe") or {}).get("items") or 0, d.get("codes")))
PY
