#!/usr/bin/env bash
# list.sh <mysql|pg> <N> <path> <hit|miss>: perf profile of an `api` serving <path> to one connection (wrk, 12 s;
# perf record --call-graph dwarf for 6 s of it). Run in a directory holding <mysql|pg>-<N>.conf, the
# configuration of an `api` on port 9700 with `auth_strategy = noauth` and the database copy_seed.py filled.
# miss: another connection raises the change counter every 2 ms, so that (nearly) every request reads its page.
# Writes wrk-<tag>.txt and perf-<tag>.data; analyze.py perf-*.data prints where the samples went.
# OKM_BIN: the binary (default target/bench-release/openkeel-magnum); MYSQL_ARGS / PG_ARGS: how the mariadb and
# psql clients reach the database servers (default: the test services of scripts/ci).
set -u
d=$1 n=$2 path=$3 mode=$4
B=${OKM_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/target/bench-release/openkeel-magnum}
MYSQL_ARGS=${MYSQL_ARGS:-"--no-defaults -h 127.0.0.1 -P 13306 -u openkeel -popenkeel-test"}
PG_ARGS=${PG_ARGS:-"-h 127.0.0.1 -p 15432 -U openkeel"}
pkill -f "openkeel-magnum api --config-file" 2>/dev/null; sleep 0.5
$B api --config-file $d-$n.conf > api-$d-$n.log 2>&1 &
API=$!
for i in $(seq 1 100); do curl -sf -o /dev/null localhost:9700/ && break; sleep 0.2; done
# the seed's project and user
if [ $d = mysql ]; then
  read -r PROJECT USER_ID < <(mariadb $MYSQL_ARGS -N -e "SELECT project_id, user_id FROM cluster LIMIT 1" okm_prof_$n)
else
  read -r PROJECT USER_ID < <(psql -At -F ' ' $PG_ARGS -c "SELECT project_id, user_id FROM cluster LIMIT 1" okm_prof_$n)
fi
H=(-H "x-project-id: $PROJECT" -H "x-user-id: $USER_ID" -H "x-roles: member,reader" -H "OpenStack-API-Version: container-infra latest")
for i in 1 2 3; do curl -sf -o /dev/null "${H[@]}" "localhost:9700$path" || echo "request failed"; done
BUMP=""
if [ $mode = miss ]; then
  if [ $d = mysql ]; then
    (while :; do echo "UPDATE openkeel_change SET n = n + 1 WHERE slot = 0;"; sleep 0.002; done) | mariadb $MYSQL_ARGS okm_prof_$n &
  else
    (while :; do echo "UPDATE openkeel_change SET n = n + 1 WHERE slot = 0;"; sleep 0.002; done) | psql -q $PG_ARGS okm_prof_$n >/dev/null &
  fi
  BUMP=$!
fi
tag=$d-$n-$(echo $path | tr '/?=' '___')-$mode
wrk -t1 -c1 -d12s --latency "${H[@]}" "http://127.0.0.1:9700$path" > wrk-$tag.txt &
WRK=$!
sleep 2
perf record -F 499 --call-graph dwarf,16384 -p $API -o perf-$tag.data -- sleep 6 2>/dev/null >/dev/null
wait $WRK
[ -n "$BUMP" ] && { kill $BUMP; pkill -P $BUMP; pkill -f "sleep 0.002"; } 2>/dev/null
CPU=$(awk '{print $14+$15}' /proc/$API/stat)
kill $API; wait $API 2>/dev/null
echo "$tag: $(grep -E 'Requests/sec|^ +50%|^ +99%' wrk-$tag.txt | tr -s ' ' | tr '\n' ' ') cpu_ticks=$CPU"
