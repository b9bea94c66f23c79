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
	"path/filepath"
	"slices"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The shard label's mutating webhooks are installed only with shards > 1: one shard labels
// nothing, and each webhook is a call on every create of a session or a send. A sharded
// install has them, so that no one takes an object out of its shard's cache.
func TestChartInstallsShardLabelWebhooksOnlyWhenSharded(t *testing.T) {
	bins := testenv.ToolDir(t, "hack/cluster-binaries.sh", "helm")
	for shards, want := range map[string]bool{"1": false, "2": true, "3": true} {
		out := testenv.Run(t, testenv.RepoRoot(), nil, filepath.Join(bins, "helm"), "template", release, "dist/chart", "-n", namespace, "--set", "shards="+shards)
		cfg := objectsOf(t, out)["MutatingWebhookConfiguration/agent-session-operator-mutating-webhook-configuration"]
		hooks, _ := cfg["webhooks"].([]any)
		var names []string
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			name, _ := m["name"].(string)
			names = append(names, name)
		}
		for _, n := range shard.LabelWebhooks {
			if got := slices.Contains(names, n); got != want {
				t.Errorf("shards=%s: %s installed = %v, want %v (mutating webhooks: %v)", shards, n, got, want, names)
			}
		}
		if !slices.Contains(names, "msubagentrun.sessions.agents.dev") {
			t.Errorf("shards=%s: the runs' defaulter is missing: %v", shards, names)
		}
	}
}
