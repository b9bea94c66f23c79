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

# Writes the kubectl plugin's release archives: for each OS/ARCH (default: linux and darwin,
# amd64 and arm64) OUT/kubectl-sessions_VERSION_OS_ARCH.tar.gz holding the kubectl-sessions
# binary and LICENSE, then OUT/sha256sums.txt over every archive of VERSION in OUT. The
# archives are byte-for-byte reproducible from the same source and Go toolchain (sorted
# entries, fixed owner and mtime, gzip without a timestamp), so a release can be rebuilt to
# the sums in its krew manifest.
# Usage: hack/release-archives.sh OUT VERSION [OS/ARCH...]
set -euo pipefail

mkdir -p "$1"
OUT="$(cd "$1" && pwd)"
VERSION="$2"
shift 2
PLATFORMS=("$@")
((${#PLATFORMS[@]})) || PLATFORMS=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
cd "$(dirname "$0")/.."
STAGE="$(mktemp -d)"
trap 'rm -rf "${STAGE}"' EXIT
for p in "${PLATFORMS[@]}"; do
  os="${p%/*}" arch="${p#*/}"
  dir="${STAGE}/${os}_${arch}"
  mkdir -p "${dir}"
  echo "release-archives: kubectl-sessions ${VERSION} ${os}/${arch}" >&2
  GOOS="${os}" GOARCH="${arch}" CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w" \
    -o "${dir}/kubectl-sessions" ./cmd/kubectl-sessions
  cp LICENSE "${dir}/LICENSE"
  chmod 0755 "${dir}/kubectl-sessions"
  chmod 0644 "${dir}/LICENSE"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "${dir}" -cf - kubectl-sessions LICENSE \
    | gzip -n -9 > "${OUT}/kubectl-sessions_${VERSION}_${os}_${arch}.tar.gz"
done
(cd "${OUT}" && sha256sum "kubectl-sessions_${VERSION}"_*.tar.gz > sha256sums.txt)
echo "${OUT}"
