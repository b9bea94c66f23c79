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

package policy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestSessionModel(t *testing.T) {
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "main"}}
	agent.Spec.Model.Name = "small"
	agent.Spec.AllowedModels = []string{"big"}
	cases := map[string]struct {
		model  string
		ok     bool
		reason string
	}{
		"no override":       {ok: true},
		"the agent's model": {model: "small", ok: true},
		"an allowed model":  {model: "big", ok: true},
		"another model":     {model: "huge", reason: `model "huge" is not allowed for agent main (allowed: small, big); add it to the Agent's spec.allowedModels`},
	}
	for name, tc := range cases {
		ok, reason := SessionModel(agent, tc.model)
		if ok != tc.ok || reason != tc.reason {
			t.Errorf("%s: SessionModel(%q) = %v, %q; want %v, %q", name, tc.model, ok, reason, tc.ok, tc.reason)
		}
	}
	// The specification's default: an Agent that lists no allowedModels takes any override.
	open := agent.DeepCopy()
	open.Spec.AllowedModels = nil
	if ok, reason := SessionModel(open, "huge"); !ok {
		t.Errorf("no allowedModels: SessionModel(huge) = false, %q; want any model accepted", reason)
	}
}
