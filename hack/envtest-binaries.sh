#!/usr/bin/env bash
# Builds kube-apiserver, etcd and kubectl from the Go module proxy into a cache outside the repo,
# once per machine. No release bucket is reachable here, so the binaries are compiled from the
# published k8s.io/kubernetes module with every staging module pinned to its tagged release.
# The last line printed is the directory that holds the three binaries (KUBEBUILDER_ASSETS).
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.37.0}"
STAGING_VERSION="v0.${K8S_VERSION#1.}"
CACHE_ROOT="${AGENT_SESSIONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-session-operator}"
BIN_DIR="${CACHE_ROOT}/k8s-${K8S_VERSION}"

complete() {
  local b
  for b in kube-apiserver etcd kubectl; do
    [[ -f "${BIN_DIR}/${b}" && -x "${BIN_DIR}/${b}" ]] || return 1
  done
}
if complete; then
  echo "${BIN_DIR}"
  exit 0
fi

mkdir -p "${BIN_DIR}"
WORK="$(mktemp -d "${CACHE_ROOT}/build.XXXXXX")"
trap 'rm -rf "${WORK}"' EXIT

log() { echo "envtest-binaries: $*" >&2; }
log "building kube-apiserver, etcd and kubectl v${K8S_VERSION} into ${BIN_DIR} (once per machine, ~15 min on 2 cores)"

# kube-apiserver and kubectl: a wrapper module around k8s.io/kubernetes.
mkdir -p "${WORK}/k8s"
cd "${WORK}/k8s"
cat > go.mod <<GOMOD
module local/envtest-k8s

go 1.26

require k8s.io/kubernetes v${K8S_VERSION}
GOMOD
go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" >/dev/null
K8S_MOD="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/v${K8S_VERSION}.mod"
# Every "k8s.io/X => ./staging/src/k8s.io/X" becomes "k8s.io/X => k8s.io/X vSTAGING".
grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/src/' "${K8S_MOD}" | awk '{print $1}' | while read -r m; do
  echo "replace ${m} => ${m} ${STAGING_VERSION}" >> go.mod
done
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
GOFLAGS=-mod=mod go mod tidy >&2
MINOR="$(echo "${K8S_VERSION}" | cut -d. -f2)"
LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=v${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${MINOR}"
LDFLAGS="${LDFLAGS} -X k8s.io/client-go/pkg/version.gitVersion=v${K8S_VERSION}"
CGO_ENABLED=0 go build -trimpath -ldflags "${LDFLAGS}" -o "${WORK}/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
CGO_ENABLED=0 go build -trimpath -ldflags "${LDFLAGS}" -o "${WORK}/kubectl" k8s.io/kubernetes/cmd/kubectl

# etcd: the server module is itself a main package; use the version kubernetes pins.
ETCD_VERSION="$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2}' "${K8S_MOD}")"
# The module lives in etcd-src: "${WORK}/etcd" is where the binary goes.
mkdir -p "${WORK}/etcd-src"
cd "${WORK}/etcd-src"
cat > go.mod <<GOMOD
module local/envtest-etcd

go 1.26

require go.etcd.io/etcd/server/v3 ${ETCD_VERSION}
GOMOD
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
GOFLAGS=-mod=mod go mod tidy >&2
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${WORK}/etcd" go.etcd.io/etcd/server/v3

# Move into place last so a half-built cache is never mistaken for a complete one.
mv "${WORK}/etcd" "${WORK}/kubectl" "${BIN_DIR}/"
mv "${WORK}/kube-apiserver" "${BIN_DIR}/"
log "done"
echo "${BIN_DIR}"
