#!/usr/bin/env bash
# Checks the file system deploy/container/build.sh assembled as the image
# would run it: nothing in it but the binary, its shared libraries, the CA
# certificates and the few files build.sh writes; then, in a chroot with the
# root file system read-only, user 65532 and an empty environment (only the
# image's ENV), `all-in-one` starts from the working directory, answers
# /healthcheck and the API, stores a cluster template in its SQLite file and
# lists both embedded drivers.
#
#   deploy/container/check.sh ROOTFS
#
# Needs root (mount namespaces and chroot), as a container runtime does.
set -euo pipefail
rootfs=$(cd "${1:?usage: check.sh ROOTFS}" && pwd)
fail() { echo "check.sh: $*" >&2; exit 1; }

# 1. What the image holds.
unexpected=$(cd "$rootfs" && find . -mindepth 1 \( -type f -o -type l \) | sort | grep -vE \
  '^\./usr/local/bin/openkeel-magnum$|^\./(usr/)?lib(64|32|x32)?/.*\.so[.0-9]*$|^\./etc/ssl/certs/ca-certificates\.crt$|^\./etc/(passwd|group|nsswitch\.conf)$' || true)
[[ -z $unexpected ]] || fail "files the image should not hold:"$'\n'"$unexpected"
[[ ! -e $rootfs/bin/sh && ! -e $rootfs/usr/bin/sh ]] || fail "the image holds a shell"
echo "check.sh: contents: $(cd "$rootfs" && find . -type f | wc -l) files, $(du -sh "$rootfs" | cut -f1):"
(cd "$rootfs" && find . -type f -printf '  %p %s\n' | sort)
[[ $(stat -c %a "$rootfs/tmp") == 1777 ]] || fail "/tmp is not 1777"
[[ $(stat -c %u "$rootfs/var/lib/openkeel-magnum") == 65532 ]] || fail "/var/lib/openkeel-magnum is not owned by 65532"

# 2. The image run: read-only root, /tmp and the working directory as
# volumes (tmpfs), user 65532, the image's environment only.
# in_image [NAME=VALUE…] ARG…: runs the binary with ARGs as the image would,
# its environment the image's ENV and the NAME=VALUEs. Each program execs
# the next, so that a background in_image's $! is the binary's process.
# Call it in a subshell: it replaces the shell that runs it.
mnt=$(mktemp -d)
unshare=$(command -v unshare)
in_image() {
  local vars=()
  while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
  exec unshare -m --propagation private bash -c '
    set -e
    mount --bind "$1" "$2"
    mount -o remount,bind,ro "$2"
    mount -t tmpfs -o mode=1777 tmpfs "$2/tmp"
    mount -t tmpfs -o uid=65532,gid=65532,mode=0755 tmpfs "$2/var/lib/openkeel-magnum"
    shift 2
    exec "$@"' _ "$rootfs" "$mnt" \
    env -i PATH=/usr/local/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt "${vars[@]}" \
    "$unshare" -R "$mnt" -w /var/lib/openkeel-magnum -S 65532 -G 65532 /usr/local/bin/openkeel-magnum "$@"
}
drivers=$(in_image driver list 2>&1) || fail "driver list in the image failed: $drivers"
for package in fake k8s_cluster_api; do
  grep -qw "$package" <<<"$drivers" || fail "driver list in the image does not show $package:"$'\n'"$drivers"
done
echo "check.sh: driver list in the image shows the embedded drivers (fake, k8s_cluster_api)"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
log=$(mktemp)
(in_image OS_API__PORT="$port" all-in-one) >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rmdir "$mnt" 2>/dev/null || true; rm -f "$log"' EXIT
base=http://127.0.0.1:$port
started=$(date +%s.%N)
until curl -fsS -o /dev/null --max-time 2 "$base/healthcheck" 2>/dev/null; do
  kill -0 $pid 2>/dev/null || { cat "$log" >&2; fail "all-in-one exited before answering"; }
  (($(date +%s) - ${started%.*} < 120)) || { cat "$log" >&2; fail "no answer on $base/healthcheck within 120 s"; }
  sleep 0.2
done
echo "check.sh: all-in-one in the image answered /healthcheck after $(python3 -c "import time; print(f'{time.time() - $started:.1f}')") s"
hdr=(-H 'X-Project-Id: 5d3e0f7a9c8b4e21a1f0c2b3d4e5f607' -H 'X-User-Id: check' -H 'X-Roles: admin')
curl -fsS --max-time 10 "$base/" | grep -q '"versions"' || fail "GET / is not the version document"
code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 "${hdr[@]}" -H 'Content-Type: application/json' \
  -d '{"name":"image-check","image_id":"fedora-coreos","coe":"kubernetes","external_network_id":"public"}' \
  "$base/v1/clustertemplates")
[[ $code == 201 ]] || { cat "$log" >&2; fail "POST /v1/clustertemplates answered $code, not 201"; }
curl -fsS --max-time 10 "${hdr[@]}" "$base/v1/clustertemplates" | grep -q '"name": *"image-check"' ||
  fail "the template is not listed"
echo "check.sh: the API stored and listed a cluster template (SQLite in the working directory)"
kill $pid
wait $pid 2>/dev/null || true
