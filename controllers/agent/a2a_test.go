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
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
)

// The Ready message names each remote agent and whether its card was read; a refused one
// (egress, Secret, another origin, a card signature that does not verify) makes the Agent not Ready, one that is down does not.
func TestA2AReadiness(t *testing.T) {
	for name, tc := range map[string]struct {
		cards          []sessionsv1alpha1.A2AAgentStatus
		summary        string
		retry          bool
		reason, prefix string
	}{
		"read": {cards: []sessionsv1alpha1.A2AAgentStatus{{Name: "planner", CardRead: true}}, summary: "A2A agents: planner card read"},
		"down": {cards: []sessionsv1alpha1.A2AAgentStatus{{Name: "planner", CardRead: true}, {Name: "search", Reason: mcptools.ReasonUnreachable}},
			summary: "A2A agents: planner card read, search card not read", retry: true},
		"refused": {cards: []sessionsv1alpha1.A2AAgentStatus{{Name: "planner", Reason: mcptools.ReasonEgressRefused, Message: "url refused"}},
			summary: "A2A agents: planner card not read", retry: true, reason: mcptools.ReasonEgressRefused, prefix: "A2A agent planner: url refused"},
		"card signature invalid": {cards: []sessionsv1alpha1.A2AAgentStatus{{Name: "planner", Reason: a2atools.ReasonCardSignatureInvalid, Message: "no signature verifies"}},
			summary: "A2A agents: planner card not read", retry: true, reason: a2atools.ReasonCardSignatureInvalid,
			prefix: "A2A agent planner: no signature verifies"},
		"probing": {cards: []sessionsv1alpha1.A2AAgentStatus{{Name: "planner", Reason: mcpReasonProbing}}, summary: "A2A agents: planner probing"},
	} {
		t.Run(name, func(t *testing.T) {
			summary, retry := a2aSummary(tc.cards)
			reason, msg := a2aRefused(tc.cards)
			got := []any{summary, retry, reason, msg, a2aProbing(tc.cards)}
			want := []any{tc.summary, tc.retry, tc.reason, tc.prefix, name == "probing"}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
