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
	"slices"
	"strings"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// SessionModel judges a model override, a spawn's or a session's: as the specification
// says, any model is accepted (a model the provider refuses fails the turn with an error
// naming it; budgets bound the cost) unless the Agent's allowedModels narrows the choice to
// its own model and those listed. "" (no override) is always allowed. The reason names the
// setting that would allow it.
func SessionModel(agent *sessionsv1alpha1.Agent, model string) (bool, string) {
	if model == "" || len(agent.Spec.AllowedModels) == 0 || model == agent.Spec.Model.Name || slices.Contains(agent.Spec.AllowedModels, model) {
		return true, ""
	}
	return false, fmt.Sprintf("model %q is not allowed for agent %s (allowed: %s); add it to the Agent's spec.allowedModels",
		model, agent.Name, strings.Join(modelChoices(agent), ", "))
}

// modelChoices are the models an Agent whose allowedModels narrows the choice accepts.
func modelChoices(agent *sessionsv1alpha1.Agent) []string {
	allowed := append([]string{agent.Spec.Model.Name}, agent.Spec.AllowedModels...)
	return slices.DeleteFunc(allowed, func(m string) bool { return m == "" })
}
