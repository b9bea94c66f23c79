#!/usr/bin/env bash
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
