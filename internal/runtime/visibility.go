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

package runtime

import (
	"path"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// VisibilityInput is what a visibility decision needs.
type VisibilityInput struct {
	// Policy is the namespace's SessionPolicy (zero when there is none).
	Policy *sessionsv1alpha1.SessionPolicy
	// Agent is the requester's Agent (its sandbox settings clamp the visibility).
	Agent *sessionsv1alpha1.Agent
	// Requester is the session whose tool asks; Target the session it would see.
	Requester, Target *sessionsv1alpha1.AgentSession
	// SpawnedBy returns the spawnedBy of the session with the given key ("" when unknown),
	// for walks up a spawn tree.
	SpawnedBy func(key string) string
}

// VisibilityFunc decides whether a session's tools may see another session. It is a seam:
// the rule belongs to internal/policy (shared with the webhook), and Options.Visibility
// should be set to its function once that package is merged.
type VisibilityFunc func(in VisibilityInput) bool

// maxSpawnChain bounds walks up spawnedBy links (maxSpawnDepth is at most 5).
const maxSpawnChain = 8

// EffectiveVisibility is the policy's visibility (default tree), clamped to tree for a
// sandboxed session unless its Agent's sandbox.sessionToolsVisibility is all.
func EffectiveVisibility(in VisibilityInput) sessionsv1alpha1.Visibility {
	v := sessionsv1alpha1.VisibilityTree
	if in.Policy != nil && in.Policy.Spec.Visibility != "" {
		v = in.Policy.Spec.Visibility
	}
	sandboxed := in.Requester.Spec.Sandboxed || (in.Agent != nil && in.Agent.Spec.Sandbox.Enabled)
	spawnedOnly := in.Agent == nil || in.Agent.Spec.Sandbox.SessionToolsVisibility != sessionsv1alpha1.ToolsVisibilityAll
	if sandboxed && spawnedOnly && (v == sessionsv1alpha1.VisibilityAgent || v == sessionsv1alpha1.VisibilityAll) {
		v = sessionsv1alpha1.VisibilityTree
	}
	return v
}

// DefaultVisibility is the seeds' rule: self sees only itself; tree adds the sessions
// spawned from it (transitively); agent, every session of its agent; all, every session,
// where another agent's sessions also need agentToAgent.enabled and an allow glob matching
// that agent (no globs: any agent).
func DefaultVisibility(in VisibilityInput) bool {
	req, tgt := in.Requester, in.Target
	if req.Spec.Key == tgt.Spec.Key {
		return true
	}
	switch EffectiveVisibility(in) {
	case sessionsv1alpha1.VisibilityTree:
		return spawnedFrom(tgt, req.Spec.Key, in.SpawnedBy)
	case sessionsv1alpha1.VisibilityAgent:
		return tgt.Spec.AgentID == req.Spec.AgentID
	case sessionsv1alpha1.VisibilityAll:
		if tgt.Spec.AgentID == req.Spec.AgentID {
			return true
		}
		return in.Policy != nil && agentAllowed(&in.Policy.Spec.AgentToAgent, tgt.Spec.AgentID)
	}
	return false
}

// spawnedFrom says whether target descends from the session with key ancestor.
func spawnedFrom(target *sessionsv1alpha1.AgentSession, ancestor string, spawnedBy func(string) string) bool {
	parent := target.Spec.SpawnedBy
	for range maxSpawnChain {
		if parent == "" {
			return false
		}
		if parent == ancestor {
			return true
		}
		if spawnedBy == nil {
			return false
		}
		parent = spawnedBy(parent)
	}
	return false
}

func agentAllowed(a2a *sessionsv1alpha1.AgentToAgentSpec, agentID string) bool {
	if !a2a.Enabled {
		return false
	}
	if len(a2a.Allow) == 0 {
		return true
	}
	for _, g := range a2a.Allow {
		if ok, _ := path.Match(g, agentID); ok {
			return true
		}
	}
	return false
}
