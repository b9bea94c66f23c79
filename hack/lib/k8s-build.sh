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

# Sourced by hack/envtest-binaries.sh and hack/cluster-binaries.sh: Kubernetes commands built
# from the Go module proxy into a per-machine cache. No release bucket is reachable here, so the
# binaries are compiled from the published k8s.io/kubernetes module with every staging module
# pinned to its tagged release.

K8S_VERSION="${K8S_VERSION:-1.37.0}"
STAGING_VERSION="v0.${K8S_VERSION#1.}"
CACHE_ROOT="${AGENT_SESSIONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-session-operator}"
BIN_DIR="${CACHE_ROOT}/k8s-${K8S_VERSION}"

# One build at a time per machine: parallel test packages and worktrees may all ask at once;
# the others wait here and then find the binaries in place.
mkdir -p "${CACHE_ROOT}"
exec 8>"${CACHE_ROOT}/k8s-build.lock"
flock 8

# have_all NAME...: every named binary is in BIN_DIR.
have_all() {
  local b
  for b in "$@"; do
    [[ -f "${BIN_DIR}/${b}" && -x "${BIN_DIR}/${b}" ]] || return 1
  done
}

# k8s_module DIR CMD...: a wrapper module in DIR that requires k8s.io/kubernetes and imports
# k8s.io/kubernetes/cmd/CMD for each CMD. Sets K8S_MOD (kubernetes' own go.mod).
k8s_module() {
  local dir="$1" m c
  shift
  mkdir -p "${dir}"
  printf 'module local/k8s-wrapper\n\ngo 1.26\n\nrequire k8s.io/kubernetes v%s\n' "${K8S_VERSION}" > "${dir}/go.mod"
  k8s_mod_file
  # Every "k8s.io/X => ./staging/src/k8s.io/X" becomes "k8s.io/X => k8s.io/X vSTAGING".
  grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/src/' "${K8S_MOD}" | awk '{print $1}' | while read -r m; do
    echo "replace ${m} => ${m} ${STAGING_VERSION}" >> "${dir}/go.mod"
  done
  { printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for c in "$@"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "${c}"; done
    printf ')\n'; } > "${dir}/tools.go"
  (cd "${dir}" && GOFLAGS=-mod=mod go mod tidy >&2)
}

# k8s_mod_file: downloads kubernetes' own go.mod (nothing else) and sets K8S_MOD to it.
k8s_mod_file() {
  local tmp
  tmp="$(mktemp -d)"
  printf 'module local/k8s-mod\n\ngo 1.26\n' > "${tmp}/go.mod"
  (cd "${tmp}" && go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" >/dev/null)
  rm -rf "${tmp}"
  K8S_MOD="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/v${K8S_VERSION}.mod"
}

# k8s_build DIR OUT CMD...: builds k8s.io/kubernetes/cmd/CMD in the wrapper module DIR into OUT
# (with several CMDs, OUT is a directory ending in /), stamped with the release version as the
# release build does.
k8s_build() {
  local dir="$1" out="$2" minor ldflags c pkgs=()
  shift 2
  for c in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/${c}"); done
  minor="$(echo "${K8S_VERSION}" | cut -d. -f2)"
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
  ldflags="${ldflags} -X k8s.io/client-go/pkg/version.gitVersion=v${K8S_VERSION}"
  (cd "${dir}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${out}" "${pkgs[@]}")
}

# work_dir: a scratch directory under the cache, removed when the script exits; sets WORK.
work_dir() {
  mkdir -p "${BIN_DIR}"
  WORK="$(mktemp -d "${CACHE_ROOT}/build.XXXXXX")"
  trap 'rm -rf "${WORK}"' EXIT
}
