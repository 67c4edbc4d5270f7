#!/usr/bin/env bash
# Create+delete pairs per second with wrk (wrk/create_delete_pairs.lua).
#
#   pairs.sh templates|clusters URL TOKEN OUTDIR
#
# Env: BODY_FILE (POST body, required), DURATION [10s], CONNS ["1 16"],
# THREADS [2], REPS [1], TIMEOUT [60s], API_VERSION ["container-infra latest"],
# MONITOR ("name:PGID ..." for procmon.py), LABEL, DRAIN_PGIDS (process groups
# that must fall idle after each run before the next one starts), REF_DIR.
# Appends one JSON line per run to OUTDIR/results.jsonl (endpoint
# "<kind>_create_delete"), in the format of the reference's load.sh.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KIND=${1:?usage: pairs.sh templates|clusters URL TOKEN OUTDIR}
URL=${2:?}; URL=${URL%/}
TOKEN=${3:?}
OUT=${4:?}
REF_DIR=${REF_DIR:?REF_DIR must point at the reference scripts}
mkdir -p "$OUT"
DURATION=${DURATION:-10s}; CONNS=${CONNS:-1 16}; THREADS=${THREADS:-2}; REPS=${REPS:-1}
TIMEOUT=${TIMEOUT:-60s}; API_VERSION=${API_VERSION:-container-infra latest}; LABEL=${LABEL:-}
case $KIND in
  templates) coll=/v1/clustertemplates created=201 ;;
  clusters) coll=/v1/clusters created=202 ;;
  *) echo "unknown kind $KIND" >&2; exit 2 ;;
esac
H=(-H "X-Auth-Token: $TOKEN" -H "OpenStack-API-Version: $API_VERSION")

cleanup_templates() { # templates named bench-tpl left by a POST whose DELETE never ran
  curl -s -m 120 "${H[@]}" "$URL/v1/clustertemplates?limit=1000" | python3 -c '
import json,sys
try: d=json.load(sys.stdin)
except Exception: sys.exit(0)
for t in d.get("clustertemplates", []):
    if t.get("name") == "bench-tpl": print(t["uuid"])' | while read -r u; do
    curl -s -m 60 -o /dev/null -X DELETE "${H[@]}" "$URL/v1/clustertemplates/$u"; done
}

[[ $KIND == templates ]] && cleanup_templates
for c in $CONNS; do
  t=$((THREADS < c ? THREADS : c))
  for ((r = 1; r <= REPS; r++)); do
    mon_pid=""
    if [[ -n ${MONITOR:-} ]]; then
      # shellcheck disable=SC2086
      python3 "$REF_DIR/procmon.py" "$OUT/mon.json" $MONITOR & mon_pid=$!; sleep 0.3
    fi
    line=$(WRK_BODY_FILE="$BODY_FILE" WRK_COLLECTION="$coll" WRK_CREATED="$created" \
      wrk -t "$t" -c "$c" -d "$DURATION" --timeout "$TIMEOUT" -s "$HERE/../wrk/create_delete_pairs.lua" \
      "${H[@]}" "$URL$coll" | grep '^WRKJSON ' | cut -d' ' -f2-) || line=""
    mon='{}'
    if [[ -n $mon_pid ]]; then kill -TERM "$mon_pid"; wait "$mon_pid" 2>/dev/null || true; mon=$(cat "$OUT/mon.json"); fi
    if [[ -n ${DRAIN_PGIDS:-} ]]; then
      # shellcheck disable=SC2086
      python3 "$HERE/waitidle.py" --timeout 180 $DRAIN_PGIDS || true
    fi
    [[ $KIND == templates ]] && cleanup_templates
    [[ -n $line ]] || { echo "pairs $KIND c=$c rep=$r: wrk gave no result" >&2; continue; }
    python3 -c 'import json,sys
d={"endpoint":sys.argv[8],"path":sys.argv[9],"conns":int(sys.argv[1]),
   "threads":int(sys.argv[2]),"rep":int(sys.argv[3]),"duration":sys.argv[4],"label":sys.argv[5],
   "extra_header":"","probe":{}}
d.update(json.loads(sys.argv[6])); d["monitor"]=json.loads(sys.argv[7]); print(json.dumps(d))' \
      "$c" "$t" "$r" "$DURATION" "$LABEL" "$line" "$mon" "${KIND}_create_delete" "$coll" >>"$OUT/results.jsonl"
    tail -1 "$OUT/results.jsonl" | python3 -c 'import json,sys
d=json.loads(sys.stdin.read()); l=d["lat_ms"]
print("%-28s %-10s c=%-3d rep=%d  %7.2f accepted/s %7.2f pairs/s (codes %s)  p50 %.1f ms  p99 %.1f ms" % (
  d["endpoint"], d["label"], d["conns"], d["rep"], d["accepted_per_s"], d["pairs_per_s"], d["codes"], l["p50"], l["p99"]))' >&2
  done
done
