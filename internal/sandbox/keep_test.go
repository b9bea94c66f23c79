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

package sandbox

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// refHash is the label agent-sandbox's template controller puts on every template.
const refHash = sandboxv1beta1.SandboxTemplateRefHashLabel

func TestKeepTemplate(t *testing.T) {
	want := Template(agent(nil), "example/sandbox:1", GVisor)
	for name, tc := range map[string]struct {
		have       func() *sandboxextv1beta1.SandboxTemplate
		wantLabels map[string]string
	}{
		"new": {
			have:       func() *sandboxextv1beta1.SandboxTemplate { return &sandboxextv1beta1.SandboxTemplate{} },
			wantLabels: map[string]string{AgentLabel: "coder"},
		},
		"agent-sandbox's label stays": {
			have: func() *sandboxextv1beta1.SandboxTemplate {
				h := want.DeepCopy()
				h.Labels[refHash] = "68c3b9a5"
				return h
			},
			wantLabels: map[string]string{AgentLabel: "coder", refHash: "68c3b9a5"},
		},
		"our label and spec put back": {
			have: func() *sandboxextv1beta1.SandboxTemplate {
				h := want.DeepCopy()
				h.Labels = map[string]string{AgentLabel: "someone-else", refHash: "x"}
				h.Spec.PodTemplate.Spec.Containers[0].Image = "evil/image"
				h.Spec.PodTemplate.Spec.RuntimeClassName = nil
				return h
			},
			wantLabels: map[string]string{AgentLabel: "coder", refHash: "x"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			have := tc.have()
			KeepTemplate(have, want)
			if !equality.Semantic.DeepEqual(have.Labels, tc.wantLabels) {
				t.Errorf("labels %v, want %v", have.Labels, tc.wantLabels)
			}
			if !equality.Semantic.DeepEqual(have.Spec, want.Spec) {
				t.Errorf("spec is not the Agent's:\n%+v", have.Spec)
			}
			// A second reconcile finds nothing to write (CreateOrUpdate compares the two).
			again := have.DeepCopy()
			KeepTemplate(again, want)
			if !equality.Semantic.DeepEqual(again, have) {
				t.Error("applied again it changed the template: the Agent controller would write on every reconcile")
			}
		})
	}
}

func TestKeepWarmPool(t *testing.T) {
	want := WarmPool(agent(func(s *sessionsv1alpha1.SandboxSpec) { s.WarmPool = ptr.To[int32](2) }))
	have := want.DeepCopy()
	have.Labels["team.example/cost-center"] = "42"
	have.Spec.Replicas = ptr.To[int32](0)
	have.Status.ReadyReplicas = 1
	KeepWarmPool(have, want)
	if have.Labels["team.example/cost-center"] != "42" || have.Labels[AgentLabel] != "coder" {
		t.Errorf("labels %v: want ours and the foreign one", have.Labels)
	}
	if ptr.Deref(have.Spec.Replicas, 0) != 2 || have.Status.ReadyReplicas != 1 {
		t.Errorf("replicas %d, status readyReplicas %d: want the Agent's 2 and agent-sandbox's status left alone", ptr.Deref(have.Spec.Replicas, 0), have.Status.ReadyReplicas)
	}
}
