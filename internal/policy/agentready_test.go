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

func TestAgentUnready(t *testing.T) {
	a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 2}}
	if got := AgentUnready(a); got != "" {
		t.Errorf("an Agent not judged yet is not refused: %q", got)
	}
	a.Status.Conditions = []metav1.Condition{{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: "SecretNotUsable", Message: "m", ObservedGeneration: 1}}
	if got := AgentUnready(a); got != "" {
		t.Errorf("a verdict on an older generation does not count: %q", got)
	}
	a.Status.Conditions[0].ObservedGeneration = 2
	if got := AgentUnready(a); got != "Agent a is not Ready (SecretNotUsable): m" {
		t.Errorf("AgentUnready = %q", got)
	}
}
