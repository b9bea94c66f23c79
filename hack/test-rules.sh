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

# Runs the promtool unit tests of a PrometheusRule (RULES_test.yaml beside it) against its
# groups, extracted as rules.yaml next to a copy of the tests.
set -euo pipefail
RULES="${1:?usage: hack/test-rules.sh PROMETHEUSRULE.yaml}"
TESTS="${RULES%.yaml}_test.yaml"
PROMTOOL="$("$(dirname "$0")/promtool.sh" | tail -n 1)"
TMP="$(mktemp -d)"
trap 'rm -rf "${TMP}"' EXIT
sed -n '/^spec:$/,$p' "${RULES}" | sed '1d; s/^  //' > "${TMP}/rules.yaml"
cp "${TESTS}" "${TMP}/rules_test.yaml"
"${PROMTOOL}" test rules "${TMP}/rules_test.yaml"
