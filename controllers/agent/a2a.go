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

package agent

import (
	"fmt"
	"strings"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
)

// The Agent's remote A2A agents (spec.tools.a2aAgents) in its status: whose cards were read,
// probed with its MCP servers (mcpStatus).

// a2aReported says whether status.a2aAgents is about a's generation and remote agents.
func a2aReported(a *sessionsv1alpha1.Agent) bool {
	if a.Status.ObservedGeneration != a.Generation || len(a.Status.A2AAgents) != len(a.Spec.Tools.A2AAgents) {
		return false
	}
	for i, s := range a.Spec.Tools.A2AAgents {
		if a.Status.A2AAgents[i].Name != s.Name {
			return false
		}
	}
	return true
}

// a2aProbing says whether a remote agent's card has not been asked for yet.
func a2aProbing(cards []sessionsv1alpha1.A2AAgentStatus) bool {
	for _, c := range cards {
		if c.Reason == mcpReasonProbing {
			return true
		}
	}
	return false
}

// a2aRefused returns the reason and message of the first remote agent the operator refuses
// (its URL, a header Secret, a card naming another origin, or a card whose signature does not
// verify): the Agent is not Ready then, with that reason.
// A remote that is down is not counted.
func a2aRefused(cards []sessionsv1alpha1.A2AAgentStatus) (string, string) {
	for _, c := range cards {
		switch c.Reason {
		case mcptools.ReasonEgressRefused, mcptools.ReasonSecretNotUsable, mcptools.ReasonInvalidURL, mcptools.ReasonOriginRefused,
			a2atools.ReasonCardSignatureInvalid:
			return c.Reason, fmt.Sprintf("A2A agent %s: %s", c.Name, c.Message)
		}
	}
	return "", ""
}

// a2aSummary is e.g. "A2A agents: planner card read, search card not read".
func a2aSummary(cards []sessionsv1alpha1.A2AAgentStatus) (string, bool) {
	parts := make([]string, 0, len(cards))
	retry := false
	for _, c := range cards {
		switch {
		case c.CardRead:
			parts = append(parts, c.Name+" card read")
		case c.Reason == mcpReasonProbing:
			parts = append(parts, c.Name+" probing")
		default:
			parts = append(parts, c.Name+" card not read")
			retry = true
		}
	}
	return "A2A agents: " + strings.Join(parts, ", "), retry
}
