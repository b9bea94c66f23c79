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

package lookup

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

func TestGatherSpawn(t *testing.T) {
	agent := func(name string) *sessionsv1alpha1.Agent {
		return &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	}
	bob := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "bob-main", Namespace: "ns"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:bob:main", AgentID: "bob"}}
	c := testenv.IndexFake(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(bob, agent("bob"), agent("ops"))).Build()
	l := New(c, nil)
	// facts names what GatherSpawn found: the requester's key and the Agents' names ("" for none).
	type facts struct{ Requester, RequesterAgent, TargetID, Target string }
	cases := map[string]struct {
		spec sessionsv1alpha1.SubagentRunSpec
		want facts
	}{
		"a person's spawn naming its agent": {spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "ops"},
			want: facts{TargetID: "ops", Target: "ops"}},
		"a requester's spawn runs under the requester's agent": {spec: sessionsv1alpha1.SubagentRunSpec{RequesterSessionKey: "agent:bob:main"},
			want: facts{Requester: "agent:bob:main", RequesterAgent: "bob", TargetID: "bob", Target: "bob"}},
		"a requester's spawn under another agent": {spec: sessionsv1alpha1.SubagentRunSpec{RequesterSessionKey: "agent:bob:main", AgentID: "ops"},
			want: facts{Requester: "agent:bob:main", RequesterAgent: "bob", TargetID: "ops", Target: "ops"}},
		"a requester no session has: the Agent its key names": {spec: sessionsv1alpha1.SubagentRunSpec{RequesterSessionKey: "agent:ops:main"},
			want: facts{RequesterAgent: "ops"}},
		"an Agent that does not exist": {spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "ghost"}, want: facts{TargetID: "ghost"}},
		"no agent and no requester":    {want: facts{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := l.GatherSpawn(context.Background(), "ns", &tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			got := facts{TargetID: f.TargetID}
			if f.Requester != nil {
				got.Requester = f.Requester.Spec.Key
			}
			if f.RequesterAgent != nil {
				got.RequesterAgent = f.RequesterAgent.Name
			}
			if f.Target != nil {
				got.Target = f.Target.Name
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GatherSpawn (-want +got):\n%s", diff)
			}
		})
	}
}
