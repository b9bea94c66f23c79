#!/usr/bin/env bash
# Builds promtool (Prometheus's rule checker) from the Go module proxy into the per-machine
# cache, once, for make verify's `promtool check rules`. No release download is reachable
# here. The last line printed is the binary's path.
set -euo pipefail

PROM_VERSION="${PROM_VERSION:-v0.316.0}"
CACHE_ROOT="${AGENT_SESSIONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-session-operator}"
BIN="${CACHE_ROOT}/promtool-${PROM_VERSION}/promtool"
if [[ -x "${BIN}" ]]; then
  echo "${BIN}"
  exit 0
fi
mkdir -p "${CACHE_ROOT}"
exec 7>"${CACHE_ROOT}/promtool.lock"
flock 7
if [[ -x "${BIN}" ]]; then
  echo "${BIN}"
  exit 0
fi
echo "promtool: building github.com/prometheus/prometheus/cmd/promtool ${PROM_VERSION} (once per machine)" >&2
WORK="$(mktemp -d "${CACHE_ROOT}/promtool-build.XXXXXX")"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"
printf 'module local/promtool\n\ngo 1.26\n\nrequire github.com/prometheus/prometheus %s\n' "${PROM_VERSION}" > go.mod
printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/prometheus/prometheus/cmd/promtool"\n' > tools.go
GOFLAGS=-mod=mod go mod tidy >&2
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o promtool github.com/prometheus/prometheus/cmd/promtool
mkdir -p "$(dirname "${BIN}")"
mv promtool "${BIN}"
echo "${BIN}"
