#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that the Kubernetes API tests
# start (each test of the driver host and of the black-box suites starts its
# own), from the Go module proxy only, using the separate tools/ module,
# fetches the Cluster API and CAPO CustomResourceDefinitions those tests
# install, and prints where they are on stdout (logs go to stderr):
#
#   eval "$(scripts/ci/kube-apiserver.sh)"
#
# The binaries go to ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/kube-bin/<version>/
# (<version> names Kubernetes, etcd, Go and a digest of tools/go.sum) and are
# built once: a second run only prints the export lines. Nothing is
# started here; each test starts its own etcd and kube-apiserver.
#
# The CRDs are the unmodified files of the Cluster API and Cluster API
# Provider OpenStack release modules (downloaded through the Go module proxy
# and checked against the checksum database, as any module), copied once to
# ${OKM_CACHE}/kube-crds/<capi>-<capo>/{cluster-api-<capi>,cluster-api-provider-openstack-<capo>}/.
#
# A cold build (empty Go build cache) compiles a large part of Kubernetes and
# takes several minutes on 2 cores; it runs under nice so that it does not
# starve other work.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="$ROOT/tools"
CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"

log() { echo "kube-apiserver.sh: $*" >&2; }

# Temporary directories of this run, removed on exit.
TMPS=()
trap 'rm -rf "${TMPS[@]}"' EXIT

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
	TMPS+=("$TMP")
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

# The Cluster API releases whose CRDs the tests install (the versions the
# Cluster API driver writes for), and the folders of each module that hold
# them: CAPI's core (with addons, IPAM and runtime), kubeadm bootstrap and
# kubeadm control plane bases; CAPO's one bases folder.
CAPI_VERSION=v1.14.0
CAPO_VERSION=v0.14.7
CAPI_CRD_DIRS=(core/config/crd/bases bootstrap/kubeadm/config/crd/bases controlplane/kubeadm/config/crd/bases)
CAPO_CRD_DIRS=(config/crd/bases)
CRDS="$CACHE/kube-crds/$CAPI_VERSION-$CAPO_VERSION"
CAPI_CRDS="cluster-api-$CAPI_VERSION"
CAPO_CRDS="cluster-api-provider-openstack-$CAPO_VERSION"

# moddir MODULE@VERSION: downloads the module into the module cache (a
# no-op when it is there) and prints its directory. It runs in a throwaway
# module of its own, so that neither tools/go.mod and go.sum nor a go.mod
# above the cache directory are read or changed.
moddir() {
	(cd "$FETCH/module" && GOFLAGS=-mod=mod go mod download -json "$1") |
		sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
}

# copy_crds MODULE_DIR DEST DIR...: copies the CRD files of each DIR of the
# module into DEST, unmodified (but writable: the module cache's are not).
copy_crds() {
	local from=$1 dest=$2 dir f
	shift 2
	mkdir -p "$dest"
	for dir in "$@"; do
		for f in "$from/$dir"/*.yaml; do
			[ -e "$f" ] || { log "no CRD in $from/$dir"; exit 1; }
			install -m 0644 "$f" "$dest/"
		done
	done
}

if [ -d "$CRDS/$CAPI_CRDS" ] && [ -d "$CRDS/$CAPO_CRDS" ]; then
	log "using $CRDS"
else
	log "fetching the CRDs of cluster-api $CAPI_VERSION and cluster-api-provider-openstack $CAPO_VERSION into $CRDS"
	GOMODCACHE="$(go env GOMODCACHE)"
	export GOMODCACHE
	mkdir -p "$CACHE/kube-crds"
	FETCH="$(mktemp -d "$CACHE/kube-crds/.fetch.XXXXXX")"
	TMPS+=("$FETCH")
	mkdir "$FETCH/module"
	(cd "$FETCH/module" && go mod init openkeel-magnum/kube-crds 2>/dev/null)
	capi_dir="$(moddir "sigs.k8s.io/cluster-api@$CAPI_VERSION")"
	capo_dir="$(moddir "sigs.k8s.io/cluster-api-provider-openstack@$CAPO_VERSION")"
	if [ ! -d "$capi_dir" ] || [ ! -d "$capo_dir" ]; then
		log "go mod download named no module directory"
		exit 1
	fi
	copy_crds "$capi_dir" "$FETCH/crds/$CAPI_CRDS" "${CAPI_CRD_DIRS[@]}"
	copy_crds "$capo_dir" "$FETCH/crds/$CAPO_CRDS" "${CAPO_CRD_DIRS[@]}"
	rm -rf "$CRDS"
	mv "$FETCH/crds" "$CRDS"
	log "$(find "$CRDS" -name '*.yaml' | wc -l) CRD files in $CRDS"
fi

echo "export TEST_ASSET_KUBE_APISERVER=$BIN/kube-apiserver"
echo "export TEST_ASSET_ETCD=$BIN/etcd"
echo "export TEST_ASSET_CAPI_CRDS=$CRDS"
