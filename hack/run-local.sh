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

# `make run-local`: everything the local control plane needs, built in parallel where it can
# be, each stage announced with the time since the start, then bin/devcluster in the
# foreground. On a fresh machine most of the time is the envtest binaries (kube-apiserver,
# kubectl and etcd compiled from the Go module proxy): they build beside the project's own
# binaries and the npm packages, and a line every minute says what is still running.
#   RUN_LOCAL_ARGS  extra flags for bin/devcluster
set -euo pipefail
cd "$(dirname "$0")/.."

START="${RUN_LOCAL_STARTED:-$(date +%s)}"
export RUN_LOCAL_STARTED="${START}"
K8S_VERSION="${K8S_VERSION:-1.37.0}"
export K8S_VERSION

elapsed() { local s=$(( $(date +%s) - START )); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
say() { echo "run-local: [$(elapsed)] $*" >&2; }

STAGES="$(mktemp -d)"
cleanup() {
  # Background stages still running when the script fails are stopped with it.
  jobs -p | xargs -r kill 2>/dev/null || true
  rm -rf "${STAGES}"
}
trap cleanup EXIT

# stage NAME CMD...: runs CMD as a named stage in the background, its output prefixed; the
# stage's line says when it started and how long it took.
stage() {
  local name="$1"
  shift
  (
    began=$(date +%s)
    touch "${STAGES}/${name}"
    say "${name}: started"
    if "$@" 2>&1 | sed -u "s/^/  ${name}: /" >&2; then
      rm -f "${STAGES}/${name}"
      say "${name}: done in $(( $(date +%s) - began ))s"
    else
      rm -f "${STAGES}/${name}"
      say "${name}: FAILED after $(( $(date +%s) - began ))s"
      exit 1
    fi
  ) &
  PIDS+=("$!")
}

# heartbeat: a line a minute naming the stages still running, so a long build is never silent.
heartbeat() {
  while sleep 60; do
    local running
    running="$(ls "${STAGES}" 2>/dev/null | tr '\n' ' ')"
    [[ -n "${running}" ]] && say "still running: ${running}"
  done
}

PIDS=()
heartbeat &
HEARTBEAT=$!
# The envtest binaries and the npm packages start at once; the project's build waits only for
# its own modules (network) so that its compile overlaps the envtest binaries' downloads.
stage envtest-binaries hack/envtest-binaries.sh
stage npm-packages hack/mcp-npm.sh
stage go-modules bash -c 'go list -deps ./cmd/... >/dev/null'
wait "${PIDS[2]}" || { say "go-modules failed; see its lines above"; exit 1; }
stage project-build go build -o bin/ ./cmd/...
# agent-sandbox's controller, which devcluster runs beside the control plane.
stage agent-sandbox hack/agent-sandbox.sh bin
failed=0
for pid in "${PIDS[@]}"; do
  wait "${pid}" || failed=1
done
kill "${HEARTBEAT}" 2>/dev/null || true
if [[ ${failed} -ne 0 ]]; then
  say "a stage failed; see its lines above"
  exit 1
fi

ASSETS="$(hack/envtest-binaries.sh | tail -n 1)"
say "start-up: bin/devcluster (control plane, CRDs, webhook, agent-sandbox's controller, manager, transcript-store, samples)"
trap - EXIT
rm -rf "${STAGES}"
# shellcheck disable=SC2086 # RUN_LOCAL_ARGS is a list of flags
KUBEBUILDER_ASSETS="${ASSETS}" exec bin/devcluster --repo-root "$(pwd)" --bin-dir "$(pwd)/bin" ${RUN_LOCAL_ARGS:-}
