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

# kubernetes-sigs/agent-sandbox, the sandbox runtime, at the version go.mod requires, from the
# Go module proxy; nothing of it is copied into this repository.
#   hack/agent-sandbox.sh bin   builds agent-sandbox-controller and sandboxd into a cache outside
#                               the repo, once per machine; prints their directory
#   hack/agent-sandbox.sh crds DIR
#                               writes the module's CRDs (its k8s/crds, as released) into DIR;
#                               (make manifests keeps config/agent-sandbox/crds with it)
#   hack/agent-sandbox.sh controller DIR
#                               writes the module's controller manifests (Namespace, RBAC,
#                               Deployment, webhook Service; its k8s/, as released) into DIR
#                               (make manifests keeps config/agent-sandbox/controller with it)
set -euo pipefail
cd "$(dirname "$0")/.."

MODULE=sigs.k8s.io/agent-sandbox
VERSION="$(go list -m -f '{{.Version}}' "${MODULE}")"
CACHE_ROOT="${AGENT_SESSIONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-session-operator}"
BIN_DIR="${CACHE_ROOT}/agent-sandbox-${VERSION}"

case "${1:-bin}" in
crds)
  dir="${2:?usage: $0 crds DIR}"
  src="$(go mod download -json "${MODULE}@${VERSION}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')/k8s/crds"
  mkdir -p "${dir}"
  rm -f "${dir}"/*.agents.x-k8s.io_*.yaml "${dir}"/agents.x-k8s.io_*.yaml
  for f in "${src}"/*.yaml; do
    install -m 0644 "${f}" "${dir}/$(basename "${f}")"
  done
  ;;
controller)
  dir="${2:?usage: $0 controller DIR}"
  src="$(go mod download -json "${MODULE}@${VERSION}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')/k8s"
  mkdir -p "${dir}"
  for f in controller.yaml rbac.generated.yaml extensions.yaml extensions-rbac.generated.yaml; do
    install -m 0644 "${src}/${f}" "${dir}/${f}"
  done
  ;;
bin)
  if [[ -x "${BIN_DIR}/agent-sandbox-controller" && -x "${BIN_DIR}/sandboxd" ]]; then
    echo "${BIN_DIR}"
    exit 0
  fi
  mkdir -p "${CACHE_ROOT}"
  exec 8>"${CACHE_ROOT}/agent-sandbox-build.lock"
  flock 8
  WORK="$(mktemp -d "${CACHE_ROOT}/build.XXXXXX")"
  trap 'rm -rf "${WORK}"' EXIT
  echo "agent-sandbox: building agent-sandbox-controller and sandboxd ${VERSION} into ${BIN_DIR} (once per machine)" >&2
  # A wrapper module that requires only agent-sandbox builds it in its own dependency set, as
  # its release does. (go install pkg@version would ask the proxy for the module's version list,
  # which it refuses here.)
  cat > "${WORK}/go.mod" <<GOMOD
module local/agent-sandbox-wrapper

go 1.26

require ${MODULE} ${VERSION}
GOMOD
  printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "%s/cmd/agent-sandbox-controller"\n\t_ "%s/packages/sandboxd/cmd/sandboxd"\n)\n' \
    "${MODULE}" "${MODULE}" > "${WORK}/tools.go"
  (cd "${WORK}" && GOFLAGS=-mod=mod go mod tidy >&2 &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${WORK}/" \
      "${MODULE}/cmd/agent-sandbox-controller" "${MODULE}/packages/sandboxd/cmd/sandboxd")
  mkdir -p "${BIN_DIR}"
  # Move into place last so a half-built cache is never mistaken for a complete one.
  mv "${WORK}/agent-sandbox-controller" "${WORK}/sandboxd" "${BIN_DIR}/"
  echo "${BIN_DIR}"
  ;;
*)
  echo "usage: $0 bin | crds DIR | controller DIR" >&2
  exit 2
  ;;
esac
