#!/usr/bin/env bash
# Builds the node and control-plane binaries the cluster test needs beside the envtest ones
# (kubelet, kube-scheduler, kube-controller-manager, kube-proxy) and helm, from the Go module
# proxy into the same cache, once per machine, the way hack/envtest-binaries.sh builds
# kube-apiserver. The last line printed is the directory that holds them. With the argument
# "helm", only helm.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.37.0}"
HELM_VERSION="${HELM_VERSION:-v3.22.0}"
STAGING_VERSION="v0.${K8S_VERSION#1.}"
CACHE_ROOT="${AGENT_SESSIONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-session-operator}"
BIN_DIR="${CACHE_ROOT}/k8s-${K8S_VERSION}"
K8S_CMDS=(kubelet kube-scheduler kube-controller-manager kube-proxy)
if [[ "${1:-}" == helm ]]; then
  K8S_CMDS=()
fi

complete() {
  local b
  for b in ${K8S_CMDS[@]+"${K8S_CMDS[@]}"} helm; do
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
log() { echo "cluster-binaries: $*" >&2; }

missing=()
for b in ${K8S_CMDS[@]+"${K8S_CMDS[@]}"}; do [[ -x "${BIN_DIR}/${b}" ]] || missing+=("${b}"); done
if ((${#missing[@]})); then
  log "building ${missing[*]} v${K8S_VERSION} into ${BIN_DIR} (once per machine)"
  mkdir -p "${WORK}/k8s"
  cd "${WORK}/k8s"
  printf 'module local/cluster-k8s\n\ngo 1.26\n\nrequire k8s.io/kubernetes v%s\n' "${K8S_VERSION}" > go.mod
  go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" >/dev/null
  K8S_MOD="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/v${K8S_VERSION}.mod"
  # Every "k8s.io/X => ./staging/src/k8s.io/X" becomes "k8s.io/X => k8s.io/X vSTAGING".
  grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/src/' "${K8S_MOD}" | awk '{print $1}' | while read -r m; do
    echo "replace ${m} => ${m} ${STAGING_VERSION}" >> go.mod
  done
  { printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for b in "${missing[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "${b}"; done
    printf ')\n'; } > tools.go
  GOFLAGS=-mod=mod go mod tidy >&2
  MINOR="$(echo "${K8S_VERSION}" | cut -d. -f2)"
  LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=v${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${MINOR}"
  LDFLAGS="${LDFLAGS} -X k8s.io/client-go/pkg/version.gitVersion=v${K8S_VERSION}"
  for b in "${missing[@]}"; do
    CGO_ENABLED=0 go build -trimpath -ldflags "${LDFLAGS}" -o "${WORK}/${b}" "k8s.io/kubernetes/cmd/${b}"
  done
  # Move into place last so a half-built cache is never mistaken for a complete one.
  for b in "${missing[@]}"; do mv "${WORK}/${b}" "${BIN_DIR}/"; done
fi

if [[ ! -x "${BIN_DIR}/helm" ]]; then
  log "building helm ${HELM_VERSION} into ${BIN_DIR}"
  mkdir -p "${WORK}/helm"
  cd "${WORK}/helm"
  GOBIN="${WORK}/helm" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
  mv "${WORK}/helm/helm" "${BIN_DIR}/"
fi
log "done"
echo "${BIN_DIR}"
