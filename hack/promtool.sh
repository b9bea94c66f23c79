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

# Builds promtool (Prometheus's rule checker) from the Go module proxy into the per-machine
# cache, once, for make verify's `promtool check rules`. No release download is reachable
# here. The last line printed is the binary's path.
set -euo pipefail
source "$(dirname "$0")/lib/go-tool.sh"

PROM_VERSION="${PROM_VERSION:-v0.316.0}"
if tool_cache promtool "${PROM_VERSION}"; then
  cd "${WORK}"
  printf 'module local/promtool\n\ngo 1.26\n\nrequire github.com/prometheus/prometheus %s\n' "${PROM_VERSION}" > go.mod
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/prometheus/prometheus/cmd/promtool"\n' > tools.go
  GOFLAGS=-mod=mod go mod tidy >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o promtool github.com/prometheus/prometheus/cmd/promtool
  tool_install promtool
fi
echo "${TOOL_DIR}/promtool"
