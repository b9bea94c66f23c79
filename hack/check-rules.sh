#!/usr/bin/env bash
# Checks a PrometheusRule's groups with promtool (hack/promtool.sh builds it once per
# machine): its spec is a Prometheus rules file indented under "spec:".
set -euo pipefail
RULES="${1:?usage: hack/check-rules.sh PROMETHEUSRULE.yaml}"
PROMTOOL="$("$(dirname "$0")/promtool.sh" | tail -n 1)"
TMP="$(mktemp)"
trap 'rm -f "${TMP}"' EXIT
sed -n '/^spec:$/,$p' "${RULES}" | sed '1d; s/^  //' > "${TMP}"
"${PROMTOOL}" check rules "${TMP}"
