#!/bin/sh
# The build stage of Containerfile: builds openkeel-magnum (its driver
# components embedded) and assembles the runtime image's file system in
# ROOTFS, an empty or absent directory:
#
#   deploy/container/build.sh ROOTFS [PROFILE]
#
# PROFILE is a cargo profile, `release` by default (the image's).
# OKM_CONTAINER_BINARY names a binary built already instead (.ci/run gives
# the one its tests built). ROOTFS then holds:
#
#   /usr/local/bin/openkeel-magnum  the binary
#   /lib*, /usr/lib*                 the shared libraries it links (ldd), the
#                                    dynamic loader among them
#   /etc/ssl/certs/ca-certificates.crt
#   /etc/passwd, /etc/group          root and the image's user, 65532
#   /etc/nsswitch.conf               host names from /etc/hosts, then DNS
#   /etc/magnum                      where magnum.conf and policy.yaml go
#   /tmp                             (1777)
#   /var/lib/openkeel-magnum         the working directory, owned by 65532
set -eu
rootfs=${1:?usage: build.sh ROOTFS [PROFILE]}
profile=${2:-release}
cd "$(dirname "$0")/../.."

target=${CARGO_TARGET_DIR:-target}
case $profile in
  dev) dir=debug ;;
  *) dir=$profile ;;
esac
if [ -n "${OKM_CONTAINER_BINARY:-}" ]; then
  # A binary already built from this checkout (.ci/run gives the one its
  # tests built: a build of its own would compile the dependencies again
  # with the binary's narrower feature set).
  bin=$OKM_CONTAINER_BINARY
else
  # Containerfile sets OKM_GUEST_DRIVERS_ONLY=1: only the components the
  # binary embeds are built, not the sandbox test components of the suites.
  cargo build --locked --profile "$profile" -p openkeel-magnum --bin openkeel-magnum
  bin="$target/$dir/openkeel-magnum"
fi
[ -x "$bin" ] || { echo "build.sh: no binary at $bin" >&2; exit 1; }

if [ -e "$rootfs" ] && [ -n "$(ls -A "$rootfs")" ]; then
  echo "build.sh: $rootfs is not empty" >&2
  exit 1
fi
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc/ssl/certs" "$rootfs/etc/magnum" \
  "$rootfs/tmp" "$rootfs/var/lib/openkeel-magnum"
cp "$bin" "$rootfs/usr/local/bin/openkeel-magnum"
strip_debug=${OKM_CONTAINER_STRIP:-1}
if [ "$strip_debug" = 1 ] && command -v strip >/dev/null; then
  strip --strip-debug "$rootfs/usr/local/bin/openkeel-magnum"
fi

# Every library the dynamic loader resolves for the binary, at the path it
# resolves it to (symbolic links followed: the file is copied under the
# name the binary asks for), and the loader itself.
ldd "$bin" | awk '/=> \// { print $3 } /^[[:space:]]*\/[^ ]*ld-linux/ { print $1 }' |
  while read -r lib; do
    mkdir -p "$rootfs$(dirname "$lib")"
    cp -L "$lib" "$rootfs$lib"
  done
cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nopenkeel-magnum:x:65532:65532:openkeel-magnum:/var/lib/openkeel-magnum:/sbin/nologin\n' \
  >"$rootfs/etc/passwd"
printf 'root:x:0:\nopenkeel-magnum:x:65532:\n' >"$rootfs/etc/group"
printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
chmod 1777 "$rootfs/tmp"
chown -R 65532:65532 "$rootfs/var/lib/openkeel-magnum" 2>/dev/null ||
  echo "build.sh: not root: /var/lib/openkeel-magnum is not owned by 65532 (the image's build runs as root)" >&2
echo "build.sh: $rootfs assembled ($(du -sh "$rootfs" | cut -f1)) from $bin"
