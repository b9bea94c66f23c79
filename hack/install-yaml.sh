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

# Prints the operator's install manifest: a kustomize directory (config/default unless a second
# argument names another, e.g. config/overlays/cert-manager) with only the operator image set
# to the first argument. make build-installer, make deploy and the cluster test all use it,
# and none of them edits the repository's kustomizations.
set -euo pipefail

IMG="${1:?usage: hack/install-yaml.sh IMAGE [KUSTOMIZE_DIR]}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${2:-config/default}"
[[ "${DIR}" = /* ]] || DIR="${ROOT}/${DIR}"
KUBECTL="${KUBECTL:-kubectl}"

# name[:tag] or name@sha256:digest; a registry port (host:5000/name) is not a tag.
name="${IMG}" field="newTag" value="latest"
if [[ "${IMG}" == *@* ]]; then
  name="${IMG%@*}" field="digest" value="${IMG#*@}"
elif [[ "${IMG##*/}" == *:* ]]; then
  name="${IMG%:*}" value="${IMG##*:}"
fi

TMP="$(mktemp -d)"
trap 'rm -rf "${TMP}"' EXIT
# kustomize takes only relative paths to other kustomizations.
REL="$(realpath --relative-to="${TMP}" "${DIR}")"
cat > "${TMP}/kustomization.yaml" <<KUST
resources:
- ${REL}
images:
- name: agent-session-operator
  newName: ${name}
  ${field}: ${value}
KUST
"${KUBECTL}" kustomize "${TMP}"
