#!/usr/bin/env bash
# Copyright 2026 The agent-session-operator Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Builds the node and control-plane binaries the cluster test needs beside the envtest ones
# (kubelet, kube-scheduler, kube-controller-manager, kube-proxy) and helm, from the Go module
# proxy into the same cache, once per machine, as hack/envtest-binaries.sh builds
# kube-apiserver (hack/lib/k8s-build.sh). The last line printed is the directory that holds
# them. With the argument "helm", only helm.
set -euo pipefail
source "$(dirname "$0")/lib/k8s-build.sh"

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
K8S_CMDS=(kubelet kube-scheduler kube-controller-manager kube-proxy)
if [[ "${1:-}" == helm ]]; then
  K8S_CMDS=()
fi

if have_all ${K8S_CMDS[@]+"${K8S_CMDS[@]}"} helm; then
  echo "${BIN_DIR}"
  exit 0
fi

work_dir
log() { echo "cluster-binaries: $*" >&2; }

missing=()
for b in ${K8S_CMDS[@]+"${K8S_CMDS[@]}"}; do have_all "${b}" || missing+=("${b}"); done
if ((${#missing[@]})); then
  log "building ${missing[*]} v${K8S_VERSION} into ${BIN_DIR} (once per machine)"
  k8s_module "${WORK}/k8s" "${missing[@]}"
  for b in "${missing[@]}"; do
    k8s_build "${WORK}/k8s" "${WORK}/${b}" "${b}"
  done
  # Move into place last so a half-built cache is never mistaken for a complete one.
  for b in "${missing[@]}"; do mv "${WORK}/${b}" "${BIN_DIR}/"; done
fi

if ! have_all helm; then
  log "building helm ${HELM_VERSION} into ${BIN_DIR}"
  GOBIN="${WORK}/helm" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
  mv "${WORK}/helm/helm" "${BIN_DIR}/"
fi
log "done"
echo "${BIN_DIR}"
