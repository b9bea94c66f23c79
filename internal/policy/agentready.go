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
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// AgentUnready returns why a send or spawn into agent's sessions must fail at once, or "":
// the Agent's controller judged its current generation not Ready (a missing or unusable
// Secret, an invalid provider). An Agent not judged yet is given the benefit of the doubt;
// the turn then fails on its own if the provider cannot be built.
func AgentUnready(agent *sessionsv1alpha1.Agent) string {
	if agent == nil {
		return ""
	}
	c := meta.FindStatusCondition(agent.Status.Conditions, sessionsv1alpha1.ConditionReady)
	if c == nil || c.Status != "False" || c.ObservedGeneration != agent.Generation {
		return ""
	}
	return fmt.Sprintf("Agent %s is not Ready (%s): %s", agent.Name, c.Reason, c.Message)
}
