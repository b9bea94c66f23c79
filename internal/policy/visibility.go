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

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// maxTreeDepth bounds the walk up a spawn chain, so a cycle of hand-written spawnedBy fields
// cannot loop.
const maxTreeDepth = 16

// Sandboxed reports whether a session runs sandboxed: its own flag or its agent's.
func Sandboxed(s *sessionsv1alpha1.AgentSession, agent *sessionsv1alpha1.Agent) bool {
	return s.Spec.Sandboxed || (agent != nil && agent.Spec.Sandbox.Enabled)
}

// EffectiveVisibility is the visibility the session tools of requester get: the policy's
// (default tree), clamped to tree for a sandboxed session whose agent keeps session tools
// to spawned sessions (the default).
func EffectiveVisibility(p *sessionsv1alpha1.SessionPolicySpec, requester *sessionsv1alpha1.AgentSession, agent *sessionsv1alpha1.Agent) sessionsv1alpha1.Visibility {
	level := sessionsv1alpha1.VisibilityTree
	if p != nil && p.Visibility != "" {
		level = p.Visibility
	}
	spawnedOnly := agent == nil || agent.Spec.Sandbox.SessionToolsVisibility != sessionsv1alpha1.ToolsVisibilityAll
	if Sandboxed(requester, agent) && spawnedOnly && (level == sessionsv1alpha1.VisibilityAgent || level == sessionsv1alpha1.VisibilityAll) {
		return sessionsv1alpha1.VisibilityTree
	}
	return level
}

// ParentOf returns the key of the session that spawned key, or false.
type ParentOf func(key string) (string, bool)

// Visible decides whether target is visible to requester at the given level; the reason
// explains a refusal and names the setting that would change it.
func Visible(level sessionsv1alpha1.Visibility, a2a sessionsv1alpha1.AgentToAgentSpec, requester, target *sessionsv1alpha1.AgentSession, parentOf ParentOf) (bool, string) {
	if requester.Spec.Key == target.Spec.Key {
		return true, ""
	}
	// self is the session alone: not even the sessions it spawned, so it is judged first.
	if level == sessionsv1alpha1.VisibilitySelf {
		return false, fmt.Sprintf("%s is not visible to %s: visibility is self; set SessionPolicy spec.visibility to tree, agent or all", target.Spec.Key, requester.Spec.Key)
	}
	if InTree(requester.Spec.Key, target, parentOf) {
		return true, ""
	}
	if level == sessionsv1alpha1.VisibilityTree {
		return false, fmt.Sprintf("%s is not visible to %s: visibility tree shows only the session and the sessions it spawned; set SessionPolicy spec.visibility to agent or all", target.Spec.Key, requester.Spec.Key)
	}
	from, to := agentOf(requester), agentOf(target)
	if from == to {
		return true, ""
	}
	if level == sessionsv1alpha1.VisibilityAgent {
		return false, fmt.Sprintf("%s belongs to agent %s, not %s: visibility agent shows the requester's agent only; set SessionPolicy spec.visibility=all and allow it in spec.agentToAgent", target.Spec.Key, to, from)
	}
	if !a2a.Enabled {
		return false, fmt.Sprintf("%s belongs to agent %s: cross-agent access needs SessionPolicy spec.agentToAgent.enabled=true and an allow glob matching %q", target.Spec.Key, to, to)
	}
	if !MatchAny(a2a.Allow, to) {
		return false, fmt.Sprintf("%s belongs to agent %s, which no spec.agentToAgent.allow glob of the SessionPolicy matches; add one (e.g. %q)", target.Spec.Key, to, to)
	}
	return true, ""
}

// InTree reports whether target was spawned, directly or transitively, by the session with
// key root.
func InTree(root string, target *sessionsv1alpha1.AgentSession, parentOf ParentOf) bool {
	key := target.Spec.SpawnedBy
	for range maxTreeDepth {
		if key == "" {
			return false
		}
		if key == root {
			return true
		}
		next, ok := parentOf(key)
		if !ok {
			return false
		}
		key = next
	}
	return false
}

// SpawnDepth is how deep in a spawn chain a session is: 0 for a session nobody spawned.
func SpawnDepth(s *sessionsv1alpha1.AgentSession, parentOf ParentOf) int {
	depth, key := 0, s.Spec.SpawnedBy
	if key == "" && isSubagentKey(s.Spec.Key) {
		return 1
	}
	for key != "" && depth < maxTreeDepth {
		depth++
		key, _ = parentOf(key)
	}
	return depth
}

func agentOf(s *sessionsv1alpha1.AgentSession) string {
	if s.Spec.AgentID != "" {
		return s.Spec.AgentID
	}
	return sessionkey.AgentOf(s.Spec.Key)
}

func isSubagentKey(key string) bool {
	k, err := sessionkey.Parse(key)
	return err == nil && k.Subagent
}
