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

package sessiontools

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// agents_list shows each listed Agent's spec.description, and none of an Agent it does not list.
func TestAgentsListShowsDescriptions(t *testing.T) {
	agent := func(name, desc string, allow ...string) *sessionsv1alpha1.Agent {
		return &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: sessionsv1alpha1.AgentSpec{Description: desc, Subagents: sessionsv1alpha1.SubagentsSpec{AllowAgents: allow}}}
	}
	planner, coder, quiet := agent("planner", "plans trips", "coder"), agent("coder", "writes code"), agent("quiet", "")
	fc := newFakeClient(planner, coder, quiet)
	for name, tc := range map[string]struct {
		self *sessionsv1alpha1.Agent
		want map[string]any
	}{
		"a person sees every agent": {want: map[string]any{"agents": []any{"coder", "planner", "quiet"},
			"descriptions": map[string]any{"coder": "writes code", "planner": "plans trips"}}},
		"an agent sees what it may spawn": {self: planner, want: map[string]any{"agents": []any{"coder", "planner"},
			"descriptions": map[string]any{"coder": "writes code", "planner": "plans trips"}}},
		"no description, no descriptions": {self: quiet, want: map[string]any{"agents": []any{"quiet"}}},
	} {
		t.Run(name, func(t *testing.T) {
			c := &Call{Env: &Env{Client: fc, Reader: fc}, Namespace: ns, Agent: tc.self}
			out, err := agentsListTool().Run(t.Context(), c, json.RawMessage(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(out)
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("agents_list (-want +got):\n%s", d)
			}
		})
	}
}
