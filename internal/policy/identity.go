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
	"strings"

	"github.com/google/uuid"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// CheckChildKey judges a SubagentRun's child-session-key hint: a child is always a new
// session agent:<agentId>:subagent:<uuid> of the agent the run runs under. exists reports
// whether a session with that key is already there; a hint naming one is refused, so a
// spawn never runs (or, with cleanup: delete, deletes) inside a session it did not create.
// It returns "" when the hint is acceptable.
func CheckChildKey(hint, agentID string, exists bool) string {
	rest, ok := strings.CutPrefix(hint, sessionkey.SubagentKey(agentID, ""))
	if u, err := uuid.Parse(rest); !ok || err != nil || u.String() != rest {
		return fmt.Sprintf("the child session key must be %s with a lower-case UUID: a sub-agent runs under agent %s in a new session",
			sessionkey.SubagentKey(agentID, "<uuid>"), agentID)
	}
	if exists {
		return fmt.Sprintf("session %s already exists: a sub-agent always runs in a new session; drop the annotation %s and the operator picks a fresh key",
			hint, sessionsv1alpha1.ChildSessionKeyAnnotation)
	}
	return ""
}

// ImpliedSession is the session a send to a key that does not exist yet creates: the main
// session of an existing Agent, direct, with no override of its own (sandboxed when the Agent
// is, as Sandboxed reads it). A send there is judged on it exactly as on an existing session,
// so creating the target on first use never skips visibility, the send policy or
// agent-to-agent allow; the SessionSend controller creates this very object. It returns nil
// when key is not agent's main key: the one rule for which sends create their target.
func ImpliedSession(key string, agent *sessionsv1alpha1.Agent) *sessionsv1alpha1.AgentSession {
	if agent == nil || key != sessionkey.MainKey(agent.Name) {
		return nil
	}
	s := &sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agent.Name, ChatType: sessionsv1alpha1.ChatTypeDirect}}
	s.Name, s.Namespace = sessionkey.ObjectName(key), agent.Namespace
	return s
}

// TurnAllowed is the send policy applied to one turn of a send that runs in session: round 1
// in the target, each reply-back turn in the requester or the target, and the announce step.
// The controller calls it before every turn it starts, so a reply-back never runs in a
// session the policy protects (the send was judged on its target only) and a policy changed
// mid-send takes effect at the next turn.
func TurnAllowed(p *sessionsv1alpha1.SendPolicySpec, session *sessionsv1alpha1.AgentSession) SendDecision {
	return DecideSend(p, TargetOf(session))
}
