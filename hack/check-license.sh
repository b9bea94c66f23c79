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

# Fails naming every Go file, and every script under hack/ and .ci/, that does not start with
# the Apache-2.0 header of hack/boilerplate.go.txt (any year; scripts have it as # comments
# after the #! line; a Go file may put its //go:build line first, as controller-gen does).
# Untracked files count too, so a new file fails before it is committed.
set -euo pipefail
cd "$(dirname "$0")/.."

year='s/Copyright [0-9]\{4\} /Copyright YEAR /'
n=$(wc -l < hack/boilerplate.go.txt)
go_header=$(sed "$year" hack/boilerplate.go.txt)
sh_header=$(sed -e "$year" -e 's|^//|#|' hack/boilerplate.go.txt)

# head_of FILE SKIP: the file's first n lines after a first line matching SKIP (and the blank
# line after it).
head_of() {
	awk -v n="$n" -v skip="$2" 'NR == 1 && $0 ~ skip { s = 1; next }
		s && /^$/ { s = 0; next } { s = 0; print; if (++c == n) exit }' "$1" | sed "$year"
}

missing=()
while IFS= read -r f; do
	[ -f "$f" ] || continue # deleted, not yet committed
	case "$f" in
	*.go) want=$go_header skip='^//go:build ' ;;
	*) want=$sh_header skip='^#!' ;;
	esac
	[ "$(head_of "$f" "$skip")" = "$want" ] || missing+=("$f")
done < <(git ls-files --cached --others --exclude-standard -- '*.go' 'hack/*.sh' '.ci/run' | sort -u)

if [ ${#missing[@]} -gt 0 ]; then
	echo "missing the license header of hack/boilerplate.go.txt (copy it from any Go file):"
	printf '  %s\n' "${missing[@]}"
	exit 1
fi
