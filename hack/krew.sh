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
