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

# Sourced by the hack/ scripts that build one Go tool from the Go module proxy into the
# per-machine cache (promtool, krew); no release download is reachable here.

CACHE_ROOT="${AGENT_SESSIONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-session-operator}"

# tool_cache NAME VERSION: sets TOOL_DIR (CACHE_ROOT/NAME-VERSION) and fails when TOOL_DIR/NAME
# is built already. Otherwise it holds NAME's lock (test packages and worktrees may all ask at
# once: one builds, the others wait and then find it) and sets WORK, a scratch directory
# removed on exit, to build NAME in.
tool_cache() {
  TOOL_DIR="${CACHE_ROOT}/$1-$2"
  [[ ! -x "${TOOL_DIR}/$1" ]] || return 1
  mkdir -p "${CACHE_ROOT}"
  exec 7>"${CACHE_ROOT}/$1.lock"
  flock 7
  [[ ! -x "${TOOL_DIR}/$1" ]] || return 1
  WORK="$(mktemp -d "${CACHE_ROOT}/$1-build.XXXXXX")"
  trap 'rm -rf "${WORK}"' EXIT
  echo "$1: building $2 into ${TOOL_DIR} (once per machine)" >&2
}

# tool_install NAME: moves WORK/NAME into TOOL_DIR, last, so that a half-built cache is never
# mistaken for a complete one.
tool_install() {
  mkdir -p "${TOOL_DIR}"
  mv "${WORK}/$1" "${TOOL_DIR}/"
}
