#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that the Kubernetes API tests
# start (each test of the driver host and of the black-box suites starts its
# own), from the Go module proxy only, using the separate tools/ module, and
# prints where they are on stdout (logs go to stderr):
#
#   eval "$(scripts/ci/kube-apiserver.sh)"
#
# The binaries go to ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/kube-bin/<version>/
# (<version> names Kubernetes, etcd, Go and a digest of tools/go.sum) and are
# built once: a second run only prints the export lines. Nothing is
# started here; each test starts its own etcd and kube-apiserver.
#
# A cold build (empty Go build cache) compiles a large part of Kubernetes and
# takes several minutes on 2 cores; it runs under nice so that it does not
# starve other work.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="$ROOT/tools"
CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"

log() { echo "kube-apiserver.sh: $*" >&2; }

cd "$TOOLS"
# The main module's or the caller's flags must not leak into the tools module.
export GOFLAGS="-trimpath -buildvcs=false -mod=readonly"
export GOWORK=off

modver() { go list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' "$1"; }
K8S_VERSION="$(modver k8s.io/kubernetes)"
ETCD_VERSION="$(modver go.etcd.io/etcd/server/v3)"
GO_VERSION="$(go env GOVERSION)"
# go.sum pins every other dependency: a change there is a new build too.
SUM="$(sha256sum go.sum | cut -c1-12)"
VERSION="${K8S_VERSION}-etcd-${ETCD_VERSION}-${GO_VERSION}-${SUM}"
BIN="$CACHE/kube-bin/$VERSION"

if [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/etcd" ]; then
	log "using $BIN"
else
	log "building kube-apiserver $K8S_VERSION and etcd $ETCD_VERSION into $BIN (slow the first time)"
	mkdir -p "$CACHE/kube-bin"
	TMP="$(mktemp -d "$CACHE/kube-bin/.build.XXXXXX")"
	trap 'rm -rf "$TMP"' EXIT
	start=$(date +%s)
	# Same version stamping as the Kubernetes release build, so that the
	# server reports its real version.
	minor="${K8S_VERSION#v1.}"
	minor="${minor%%.*}"
	K8S_LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
	K8S_LDFLAGS+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
	K8S_LDFLAGS+=" -X k8s.io/component-base/version.gitTreeState=clean"
	CGO_ENABLED=0 nice -n 10 go build -ldflags "$K8S_LDFLAGS" -o "$TMP/kube-apiserver" \
		k8s.io/kubernetes/cmd/kube-apiserver >&2
	CGO_ENABLED=0 nice -n 10 go build -ldflags "-s -w" -o "$TMP/etcd" ./envtest/etcd >&2
	mkdir -p "$BIN"
	mv "$TMP/kube-apiserver" "$TMP/etcd" "$BIN/"
	log "built in $(($(date +%s) - start))s"
fi

echo "export TEST_ASSET_KUBE_APISERVER=$BIN/kube-apiserver"
echo "export TEST_ASSET_ETCD=$BIN/etcd"
