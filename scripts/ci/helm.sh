#!/usr/bin/env bash
# Builds the helm binary that the Helm chart's test (tests/e2e/helm.rs)
# renders deploy/helm/openkeel-magnum with, from the Go module proxy only,
# and prints where it is on stdout (logs go to stderr):
#
#   eval "$(scripts/ci/helm.sh)"
#
# The binary goes to ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/helm-bin/<version>/
# (<version> names helm and Go) and is built once: a second run only prints
# the export line. The module and its dependencies are checked against the
# checksum database, as any module. A cold build (empty Go build cache)
# compiles helm with its Kubernetes client libraries, about three minutes on
# 2 cores; it runs under nice so that it does not starve other work.
set -euo pipefail

CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
HELM_VERSION=v3.21.4

log() { echo "helm.sh: $*" >&2; }

# The caller's flags and workspace must not leak into the build; run
# outside any module so that no go.mod is read.
export GOFLAGS="-trimpath -buildvcs=false"
export GOWORK=off
cd /

GO_VERSION="$(go env GOVERSION)"
BIN="$CACHE/helm-bin/$HELM_VERSION-$GO_VERSION"

if [ -x "$BIN/helm" ]; then
	log "using $BIN/helm"
else
	log "building helm $HELM_VERSION into $BIN (slow the first time)"
	mkdir -p "$CACHE/helm-bin"
	TMP="$(mktemp -d "$CACHE/helm-bin/.build.XXXXXX")"
	trap 'rm -rf "$TMP"' EXIT
	start=$(date +%s)
	# Same stamping as helm's release build: its version, and the
	# Kubernetes version it renders for by default (`.Capabilities`, a
	# chart's kubeVersion), the one of the client-go it is built with
	# (v0.<minor>.x is Kubernetes 1.<minor>); otherwise that is 1.20.
	GOMOD="$(go mod download -json "helm.sh/helm/v3@$HELM_VERSION" |
		sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
	CLIENT_GO="$(awk '$1 == "k8s.io/client-go" { print $2 }' "$GOMOD")"
	K8S_MINOR="$(echo "$CLIENT_GO" | cut -d. -f2)"
	[ -n "$K8S_MINOR" ] || { log "no k8s.io/client-go in $GOMOD"; exit 1; }
	LDFLAGS="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
	LDFLAGS+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
	for pkg in pkg/chartutil pkg/lint/rules; do
		LDFLAGS+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$K8S_MINOR"
	done
	GOBIN="$TMP" CGO_ENABLED=0 nice -n 10 go install -ldflags "$LDFLAGS" \
		"helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
	mkdir -p "$BIN"
	mv "$TMP/helm" "$BIN/helm"
	log "built in $(($(date +%s) - start))s (Kubernetes 1.$K8S_MINOR by default)"
fi

echo "export OKM_HELM=$BIN/helm"
