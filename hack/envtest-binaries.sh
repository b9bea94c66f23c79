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

# Builds kube-apiserver, etcd and kubectl from the Go module proxy into a cache outside the repo,
# once per machine (hack/lib/k8s-build.sh says how).
# The last line printed is the directory that holds the three binaries (KUBEBUILDER_ASSETS).
set -euo pipefail
source "$(dirname "$0")/lib/k8s-build.sh"

if have_all kube-apiserver etcd kubectl; then
  echo "${BIN_DIR}"
  exit 0
fi

work_dir

SECONDS=0
log() { printf 'envtest-binaries: [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }
log "building kube-apiserver, kubectl and etcd v${K8S_VERSION} into ${BIN_DIR} (once per machine, ~15 min on 2 cores)"

# etcd: the server module is itself a main package; use the version kubernetes pins. It builds
# in the background, beside kube-apiserver and kubectl: their module downloads and
# single-threaded links leave cores idle that etcd's compile fills.
k8s_mod_file
ETCD_VERSION="$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2}' "${K8S_MOD}")"
build_etcd() {
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
  log "etcd ${ETCD_VERSION}: resolving its modules"
  GOFLAGS=-mod=mod go mod tidy >&2
  log "etcd: compiling"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${WORK}/etcd" go.etcd.io/etcd/server/v3
  log "etcd: built"
}
build_etcd &
ETCD_PID=$!
# A failed kube-apiserver build stops etcd's too before the scratch directory goes.
trap 'kill "${ETCD_PID}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "${WORK}"' EXIT

# kube-apiserver and kubectl: a wrapper module around k8s.io/kubernetes, built in one go build
# (their shared packages compile once, their links run side by side).
log "kube-apiserver, kubectl: resolving their modules"
k8s_module "${WORK}/k8s" kube-apiserver kubectl
log "kube-apiserver, kubectl: compiling"
k8s_build "${WORK}/k8s" "${WORK}/" kube-apiserver kubectl
log "kube-apiserver, kubectl: built"
wait "${ETCD_PID}" || { log "etcd: build failed"; exit 1; }

# Move into place last so a half-built cache is never mistaken for a complete one.
mv "${WORK}/etcd" "${WORK}/kubectl" "${BIN_DIR}/"
mv "${WORK}/kube-apiserver" "${BIN_DIR}/"
log "done"
echo "${BIN_DIR}"
