#!/usr/bin/env bash
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
