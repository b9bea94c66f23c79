// Copyright 2026 The agent-session-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package chart

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The release and namespace the chart is rendered as, as the install page's helm install names them.
const (
	release   = "agent-session-operator"
	namespace = "agent-session-operator-system"
)

// helm is the helm binary hack/cluster-binaries.sh builds once per machine.
func helm(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs helm, built once per machine")
	}
	return filepath.Join(testenv.ToolDir(t, "hack/cluster-binaries.sh", "helm"), "helm")
}

// TestValuesSchema renders the chart with values a person might mistype: values.schema.json
// must refuse each before anything renders (the error names the key), and accept the
// defaults and every documented shape.
func TestValuesSchema(t *testing.T) {
	h := helm(t)
	root := testenv.RepoRoot()
	render := func(set ...string) error {
		args := []string{"template", release, "dist/chart", "-n", namespace}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		_, err := testenv.RunErr(root, nil, h, args...)
		return err
	}

	refused := map[string]struct {
		set  []string
		want string
	}{
		"a typo'd key":               {set: []string{"image.pullpolicy=Always"}, want: "'pullpolicy' not allowed"},
		"a typo'd top-level key":     {set: []string{"persistance.size=20Gi"}, want: "'persistance' not allowed"},
		"a string for an integer":    {set: []string{"manager.maxConcurrentTurns=many"}, want: "/manager/maxConcurrentTurns"},
		"a string for a boolean":     {set: []string{"networkPolicy.enabled=maybe"}, want: "/networkPolicy/enabled"},
		"an unknown cert mode":       {set: []string{"webhook.certs=letsencrypt"}, want: "/webhook/certs"},
		"a duration without unit":    {set: []string{"manager.ttlAfterFinished=24"}, want: "/manager/ttlAfterFinished"},
		"an empty idle timeout":      {set: []string{"transcriptStore.mcpSessionIdleTimeout="}, want: "/transcriptStore/mcpSessionIdleTimeout"},
		"a size that is no quantity": {set: []string{"persistence.size=10GB"}, want: "/persistence/size"},
		"a port out of range": {set: []string{"networkPolicy.egress.apiServer[0].port=70000"},
			want: "/networkPolicy/egress/apiServer/0/port"},
		"an egress entry without ports": {set: []string{"networkPolicy.egress.allow[0].cidr=203.0.113.10/32"},
			want: "/networkPolicy/egress/allow/0"},
		"a number for the image tag":       {set: []string{"image.tag=2"}, want: "/image/tag"},
		"a read limit that is no quantity": {set: []string{"manager.a2aReadLimit=8MB"}, want: "/manager/a2aReadLimit"},
		"a typo'd sandboxes key":           {set: []string{"sandboxes.enable=true"}, want: "'enable' not allowed"},
		"an empty agent-sandbox tag":       {set: []string{"sandboxes.agentSandbox.image.tag="}, want: "/sandboxes/agentSandbox/image/tag"},
	}
	for name, c := range refused {
		t.Run("refuses "+name, func(t *testing.T) {
			err := render(c.set...)
			var ce *testenv.CommandError
			if !errors.As(err, &ce) {
				t.Fatalf("helm template --set %v rendered; want the schema to refuse it", c.set)
			}
			if !strings.Contains(ce.Stderr, "don't meet the specifications of the schema") || !strings.Contains(ce.Stderr, c.want) {
				t.Errorf("helm template --set %v: want a schema error naming %q, got:\n%s", c.set, c.want, ce.Stderr)
			}
		})
	}

	accepted := map[string][]string{
		"the defaults": nil,
		"cert-manager": {"webhook.certs=cert-manager"},
		"manager flags": {"manager.toolCreatesPerMinute=60", "manager.ttlAfterFinished=1h30m", "manager.egress.allow={10.0.0.0/8,api.example.com:443}", "manager.egress.denyUnlisted=true", "manager.extraArgs={--zap-log-level=2}",
			"manager.a2aReadLimit=16Mi", "manager.mcpReadLimit=512Ki"},
		"extra environment":    {"manager.extraEnv[0].name=OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "manager.extraEnv[0].value=http://otel:4318/v1/traces"},
		"store and volume":     {"transcriptStore.archivedTranscriptRetention=0s", "transcriptStore.apiQPSPerUser=2.5", "transcriptStore.mcpSessionIdleTimeout=1h30m", "transcriptStore.resources.limits.memory=1Gi", "persistence.size=1.5Ti", "persistence.storageClassName=fast"},
		"an egress allow list": {"networkPolicy.egress.enabled=true", "networkPolicy.egress.allow[0].cidr=203.0.113.10/32", "networkPolicy.egress.allow[0].ports={443,8443}"},
		"sandboxes": {"sandboxes.enabled=true", "sandboxes.image=example/sandbox:1", "sandboxes.agentSandbox.image.repository=example/asc",
			"sandboxes.agentSandbox.image.tag=v1", "sandboxes.agentSandbox.resources.limits.memory=1Gi"},
		"every metrics feature": {"metrics.serviceMonitor.enabled=true", "metrics.prometheusRule.enabled=true", "metrics.prometheusRule.spendPerHour=2.5", "metrics.grafanaDashboard.enabled=true"},
	}
	for name, set := range accepted {
		t.Run("accepts "+name, func(t *testing.T) {
			if err := render(set...); err != nil {
				t.Errorf("helm template --set %v: %v", set, err)
			}
		})
	}
}

// TestReadLimitValues renders the manager's --a2a-read-limit and --mcp-read-limit from
// manager.a2aReadLimit and manager.mcpReadLimit: the flags' own default (8Mi) unless set, in
// one Pod and in each shard's.
func TestReadLimitValues(t *testing.T) {
	h := helm(t)
	for name, c := range map[string]struct {
		set  []string
		kind string
		want []string
	}{
		"the defaults": {kind: "Deployment", want: []string{"--a2a-read-limit=8Mi", "--mcp-read-limit=8Mi"}},
		"set": {set: []string{"manager.a2aReadLimit=16Mi", "manager.mcpReadLimit=512Ki"}, kind: "Deployment",
			want: []string{"--a2a-read-limit=16Mi", "--mcp-read-limit=512Ki"}},
		"set, sharded": {set: []string{"shards=2", "manager.a2aReadLimit=1Gi"}, kind: "StatefulSet",
			want: []string{"--a2a-read-limit=1Gi", "--mcp-read-limit=8Mi"}},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"template", release, "dist/chart", "-n", namespace}
			for _, s := range c.set {
				args = append(args, "--set", s)
			}
			var got []string
			for key, o := range objectsOf(t, testenv.Run(t, testenv.RepoRoot(), nil, h, args...)) {
				if strings.HasPrefix(key, c.kind+"/") {
					got = append(got, managerArgs(o)...)
				}
			}
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("helm template --set %v: no %s %s among the manager's args %v", c.set, w, c.kind, got)
				}
			}
		})
	}
}

// managerArgs are the args of the manager container of a Deployment or StatefulSet object.
func managerArgs(o map[string]any) []string {
	spec, _ := o["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	containers, _ := pod["containers"].([]any)
	var out []string
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == "manager" {
			args, _ := m["args"].([]any)
			for _, a := range args {
				out = append(out, fmt.Sprint(a))
			}
		}
	}
	return out
}

// TestLintStrict is make verify's helm lint --strict, so a warning fails make test too.
func TestLintStrict(t *testing.T) {
	testenv.Run(t, testenv.RepoRoot(), nil, helm(t), "lint", "--strict", "dist/chart")
}
