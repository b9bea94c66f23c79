#!/usr/bin/env bash
# Builds krew (the kubectl plugin manager) from the Go module proxy into the per-machine
# cache, once, as hack/cluster-binaries.sh builds helm; test/krew installs the plugin with it
# from the manifest make krew-manifest writes. v0.4.3 is the newest release the proxy serves.
# The last line printed is the directory that holds the krew binary.
set -euo pipefail
source "$(dirname "$0")/lib/go-tool.sh"

KREW_VERSION="${KREW_VERSION:-v0.4.3}"
if tool_cache krew "${KREW_VERSION}"; then
  GOBIN="${WORK}" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "sigs.k8s.io/krew/cmd/krew@${KREW_VERSION}"
  tool_install krew
fi
echo "${TOOL_DIR}"
