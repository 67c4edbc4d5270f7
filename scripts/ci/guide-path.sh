#!/usr/bin/env bash
# The driver guide's path (docs/driver-sdk.md) for one built example package,
# as its author walks it with the binary and the real client, no Kubernetes
# cluster and nothing compiled:
#   driver test PACKAGE --refuses size=11
#   the package under [drivers]/drivers_path, granted what it requests;
#   driver validate (one line, exit 0)
#   all-in-one --kube memory
#   openstack coe: template with --driver, a create with size=11 (HTTP 400,
#   no cluster), a create until CREATE_COMPLETE, resize to 2 until
#   UPDATE_COMPLETE, delete until the cluster is gone
# and checks that every status came from derive-status over the driver's
# watches. Prints each step with its time, and appends one figure line to
# $OKM_FIGURES when set.
#
# Usage: scripts/ci/guide-path.sh PACKAGE_DIR ENTRY_POINT
# Needs: OPENKEEL_TEST_OPENSTACK_CLI (scripts/ci/openstack-cli.sh) and the
# binary (OKM_BINARY, default target/debug/openkeel-magnum).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PKG=$(cd "$1" && pwd)
ENTRY=$2
BIN=${OKM_BINARY:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/openkeel-magnum}
CLI=${OPENKEEL_TEST_OPENSTACK_CLI:?run scripts/ci/openstack-cli.sh first}
[[ -x $BIN ]] || { echo "guide-path: no binary at $BIN (cargo build -p openkeel-magnum)" >&2; exit 1; }
NAME=$(awk -F'"' '/^name *=/ { print $2; exit }' "$PKG/driver.toml")

work=$(mktemp -d)
server=""
cleanup() {
  if [[ -n $server ]]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "guide-path ($NAME): $*" >&2
  [[ -f $work/all-in-one.log ]] && { echo "--- all-in-one log (last 30 lines)" >&2; tail -30 "$work/all-in-one.log" >&2; }
  exit 1
}

times=()
t0=0
begin() { t0=$(date +%s%N); }
# done_step NAME: the time since `begin`, printed and kept.
done_step() {
  local ms=$((($(date +%s%N) - t0) / 1000000))
  local s
  s=$(printf '%d.%01d s' $((ms / 1000)) $((ms % 1000 / 100)))
  printf '  %-44s %s\n' "$1" "$s"
  times+=("$1 $s")
}

echo "guide path of $NAME ($ENTRY), $PKG"

begin
"$BIN" driver test "$PKG" --refuses size=11 >"$work/driver-test.txt" 2>&1 || {
  cat "$work/driver-test.txt" >&2
  fail "driver test failed"
}
grep -q '^PASSED' "$work/driver-test.txt" || { cat "$work/driver-test.txt" >&2; fail "driver test printed no PASSED verdict"; }
done_step "driver test --refuses size=11"

mkdir -p "$work/drivers"
cp -r "$PKG" "$work/drivers/$NAME"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/magnum.conf" <<EOF
[api]
port = $port

[certificates]
cert_manager_type = x509keypair

[drivers]
drivers_path = $work/drivers
precompiled_cache_dir = ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/drivers

[driver:$NAME]
grant_requested = true
EOF
verdict=$("$BIN" driver validate "$work/drivers/$NAME" --config-file "$work/magnum.conf" 2>&1) ||
  fail "driver validate refused the package: $verdict"
[[ -n $verdict && $(printf '%s\n' "$verdict" | wc -l) -eq 1 ]] || fail "driver validate printed more than one line: $verdict"

begin
(cd "$work" && exec "$BIN" all-in-one --kube memory --config-file magnum.conf >all-in-one.log 2>&1) &
server=$!
for _ in $(seq 1 600); do
  curl -sf -m 2 -o /dev/null "http://127.0.0.1:$port/" && break
  kill -0 "$server" 2>/dev/null || fail "all-in-one exited"
  sleep 0.1
done
curl -sf -m 2 -o /dev/null "http://127.0.0.1:$port/" || fail "all-in-one did not answer within 60 s"
done_step "all-in-one --kube memory answers"

# Every client call is bounded: a server that stops answering fails the step.
os() { timeout 60 "$CLI" --os-auth-type none --os-endpoint "http://127.0.0.1:$port/v1" coe "$@"; }
# until_status CLUSTER WANT: polls `cluster show` as the guide does; fails
# on a *_FAILED status and after 120 s.
until_status() {
  local status=""
  for _ in $(seq 1 240); do
    status=$(os cluster show "$1" -f value -c status 2>&1) || true
    [[ $status == "$2" ]] && return 0
    [[ $status == *_FAILED ]] && fail "$1 is $status: $(os cluster show "$1" -f value -c status_reason 2>&1)"
    sleep 0.5
  done
  fail "$1 is still '$status', not $2, after 120 s"
}

begin
os cluster template create --coe kubernetes --image ubuntu-jammy-kube \
  --external-network public --flavor m1.small --master-flavor m1.medium \
  --driver "$ENTRY" guide-template >/dev/null || fail "template create failed"
done_step "cluster template create --driver $ENTRY"

begin
if refused=$(os cluster create --cluster-template guide-template --labels size=11 guide-0 2>&1); then
  fail "a create with size=11 was accepted: $refused"
fi
[[ $refused == *"Label size must be between 1 and 10, not 11"*"(HTTP 400)"* ]] ||
  fail "a create with size=11 did not answer the driver's 400: $refused"
left=$(os cluster list -f value -c uuid) || fail "cluster list failed"
[[ -z $left ]] || fail "the refused create left a cluster: $left"
done_step "cluster create --labels size=11 (400)"

begin
os cluster create --cluster-template guide-template --node-count 1 guide-1 >/dev/null || fail "cluster create failed"
until_status guide-1 CREATE_COMPLETE
done_step "cluster create, CREATE_COMPLETE"

begin
os cluster resize guide-1 2 >/dev/null || fail "cluster resize failed"
until_status guide-1 UPDATE_COMPLETE
[[ $(os cluster show guide-1 -f value -c node_count) == 2 ]] || fail "the resized cluster does not have 2 nodes"
done_step "cluster resize 2, UPDATE_COMPLETE"

begin
os cluster delete guide-1 >/dev/null || fail "cluster delete failed"
gone=""
for _ in $(seq 1 240); do
  if ! out=$(os cluster show guide-1 -f value -c status 2>&1); then
    [[ $out == *"could not be found"* ]] && { gone=yes; break; }
  fi
  sleep 0.5
done
[[ -n $gone ]] || fail "guide-1 is still there 120 s after its delete"
done_step "cluster delete, gone"

# Each status the driver gave came from derive-status over its watches.
changes=$(grep '"cluster status changed"' "$work/all-in-one.log" || true)
derived=$(grep -c '"call":"derive-status"' <<<"$changes" || true)
polled=$(grep -vc '"call":"derive-status"' <<<"$changes" || true)
[[ -n $changes && $derived -ge 2 && $polled -eq 0 ]] ||
  fail "statuses by derive-status: $derived, by other calls: $polled (want every one by watch)"
echo "  statuses by derive-status over the watches: $derived, by poll-status: 0"

line="guide path ($NAME): $(IFS=';'; echo "${times[*]}" | sed 's/;/; /g')"
echo "$line"
[[ -n ${OKM_FIGURES:-} ]] && echo "$line" >>"$OKM_FIGURES"
exit 0
