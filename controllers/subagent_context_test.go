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

package controllers

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/protocol"
)

// A sub-agent is told the session tools its Agent's subagents.tools grants it, by name, and
// that it has none when nothing grants them.
func TestSubagentIsToldItsSessionTools(t *testing.T) {
	cases := map[string]struct {
		grant []string
		told  []string
	}{
		"nothing granted":              {},
		"history and send granted":     {grant: []string{"sessions_send", "mcp__everything__echo", "sessions_history"}, told: []string{"sessions_history", "sessions_send"}},
		"spawn is never a sub-agent's": {grant: []string{"sessions_spawn"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			childKey := "agent:research:subagent:r1"
			agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: "ns"},
				Spec: sessionsv1alpha1.AgentSpec{Subagents: sessionsv1alpha1.SubagentsSpec{Tools: tc.grant}}}
			child := session(childKey, "research")
			child.OwnerReferences = []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: "SubagentRun",
				Name: "run", UID: "r1", Controller: ptr.To(true)}}
			running := func(r *sessionsv1alpha1.SubagentRun) {
				r.Spec.RequesterSessionKey = "agent:main:main"
				r.Status = sessionsv1alpha1.SubagentRunStatus{Status: "accepted", Phase: sessionsv1alpha1.RunRunning, ChildSessionKey: childKey,
					OwnerStatus: sessionsv1alpha1.OwnerStatus{StartedAt: ptr.To(metav1.NewTime(epoch))}}
			}
			f := newFixture(t, nil, run(running), agent, child, session("agent:main:main", "main"))
			if _, err := f.runs().Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "run"}}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(protocol.SubagentTask("agent:main:main", "", tc.told), f.runner.systems["r1/task"]); diff != "" {
				t.Errorf("the task's context (-want +got):\n%s", diff)
			}
		})
	}
}
