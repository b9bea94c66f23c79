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
	"strings"
	"testing"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// spawned maps a session key to the key that spawned it.
var spawned = map[string]string{
	"agent:main:subagent:c1":     "agent:main:main",
	"agent:research:subagent:c2": "agent:main:subagent:c1",
	"agent:main:subagent:loop1":  "agent:main:subagent:loop2",
	"agent:main:subagent:loop2":  "agent:main:subagent:loop1",
}

func parentOf(key string) (string, bool) { p, ok := spawned[key]; return p, ok }

func child(key string) *sessionsv1alpha1.AgentSession {
	return session(key, func(s *sessionsv1alpha1.AgentSession) { s.Spec.SpawnedBy = spawned[key] })
}

func TestEffectiveVisibility(t *testing.T) {
	sandboxed := session("agent:main:main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.Sandboxed = true })
	plain := session("agent:main:main")
	spawnedOnly := &sessionsv1alpha1.Agent{Spec: sessionsv1alpha1.AgentSpec{Sandbox: sessionsv1alpha1.SandboxSpec{SessionToolsVisibility: sessionsv1alpha1.ToolsVisibilitySpawned}}}
	seeAll := &sessionsv1alpha1.Agent{Spec: sessionsv1alpha1.AgentSpec{Sandbox: sessionsv1alpha1.SandboxSpec{SessionToolsVisibility: sessionsv1alpha1.ToolsVisibilityAll}}}
	sandboxAgent := &sessionsv1alpha1.Agent{Spec: sessionsv1alpha1.AgentSpec{Sandbox: sessionsv1alpha1.SandboxSpec{Enabled: true}}}
	all := &sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityAll}
	cases := map[string]struct {
		p     *sessionsv1alpha1.SessionPolicySpec
		s     *sessionsv1alpha1.AgentSession
		agent *sessionsv1alpha1.Agent
		want  sessionsv1alpha1.Visibility
	}{
		"default is tree":                           {s: plain, want: sessionsv1alpha1.VisibilityTree},
		"policy applies":                            {p: all, s: plain, agent: spawnedOnly, want: sessionsv1alpha1.VisibilityAll},
		"sandboxed + spawned clamps all to tree":    {p: all, s: sandboxed, agent: spawnedOnly, want: sessionsv1alpha1.VisibilityTree},
		"sandboxed + unknown agent clamps":          {p: &sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityAgent}, s: sandboxed, want: sessionsv1alpha1.VisibilityTree},
		"sandboxed agent clamps its sessions":       {p: all, s: plain, agent: sandboxAgent, want: sessionsv1alpha1.VisibilityTree},
		"sandboxed + visibility all is not clamped": {p: all, s: sandboxed, agent: seeAll, want: sessionsv1alpha1.VisibilityAll},
		"clamp never widens self":                   {p: &sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilitySelf}, s: sandboxed, agent: spawnedOnly, want: sessionsv1alpha1.VisibilitySelf},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := EffectiveVisibility(tc.p, tc.s, tc.agent); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestVisible(t *testing.T) {
	main := session("agent:main:main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.AgentID = "main" })
	group := session("agent:main:discord:group:1", func(s *sessionsv1alpha1.AgentSession) { s.Spec.AgentID = "main" })
	research := session("agent:research:main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.AgentID = "research" })
	a2a := sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"res*"}}
	cases := map[string]struct {
		level      sessionsv1alpha1.Visibility
		a2a        sessionsv1alpha1.AgentToAgentSpec
		from, to   *sessionsv1alpha1.AgentSession
		want       bool
		wantReason string
	}{
		"self sees itself":                        {level: sessionsv1alpha1.VisibilitySelf, from: main, to: main, want: true},
		"self does not see a sibling":             {level: sessionsv1alpha1.VisibilitySelf, from: main, to: group, wantReason: "visibility is self"},
		"self does not see its own child":         {level: sessionsv1alpha1.VisibilitySelf, from: main, to: child("agent:main:subagent:c1"), wantReason: "visibility is self"},
		"tree sees a direct child":                {level: sessionsv1alpha1.VisibilityTree, from: main, to: child("agent:main:subagent:c1"), want: true},
		"tree sees a grandchild of another agent": {level: sessionsv1alpha1.VisibilityTree, from: main, to: child("agent:research:subagent:c2"), want: true},
		"tree does not see the parent":            {level: sessionsv1alpha1.VisibilityTree, from: child("agent:main:subagent:c1"), to: main, wantReason: "visibility tree"},
		"tree does not see a sibling":             {level: sessionsv1alpha1.VisibilityTree, from: main, to: group, wantReason: "spec.visibility to agent or all"},
		"a spawn cycle ends the walk":             {level: sessionsv1alpha1.VisibilityTree, from: main, to: child("agent:main:subagent:loop1")},
		"agent sees the agent's sessions":         {level: sessionsv1alpha1.VisibilityAgent, from: main, to: group, want: true},
		"agent does not see another agent":        {level: sessionsv1alpha1.VisibilityAgent, from: main, to: research, wantReason: "visibility agent"},
		"all needs agentToAgent enabled":          {level: sessionsv1alpha1.VisibilityAll, from: main, to: research, wantReason: "agentToAgent.enabled=true"},
		"all with a matching glob":                {level: sessionsv1alpha1.VisibilityAll, a2a: a2a, from: main, to: research, want: true},
		"all without a matching glob":             {level: sessionsv1alpha1.VisibilityAll, a2a: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"ops-*"}}, from: main, to: research, wantReason: "no spec.agentToAgent.allow glob"},
		"all sees the own agent without a2a":      {level: sessionsv1alpha1.VisibilityAll, from: main, to: group, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, reason := Visible(tc.level, tc.a2a, tc.from, tc.to, parentOf)
			if got != tc.want {
				t.Fatalf("Visible = %v (%s), want %v", got, reason, tc.want)
			}
			if !strings.Contains(reason, tc.wantReason) {
				t.Errorf("reason %q does not contain %q", reason, tc.wantReason)
			}
		})
	}
}

func TestSpawnDepth(t *testing.T) {
	cases := map[string]struct {
		s    *sessionsv1alpha1.AgentSession
		want int
	}{
		"main session":                 {s: session("agent:main:main"), want: 0},
		"child":                        {s: child("agent:main:subagent:c1"), want: 1},
		"grandchild":                   {s: child("agent:research:subagent:c2"), want: 2},
		"subagent key without parent":  {s: session("agent:main:subagent:orphan"), want: 1},
		"cycle is bounded, not a hang": {s: child("agent:main:subagent:loop1"), want: maxTreeDepth},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SpawnDepth(tc.s, parentOf); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestGlobs(t *testing.T) {
	cases := map[string]struct {
		globs   []string
		id      string
		want    bool
		invalid bool
	}{
		"star":            {globs: []string{"*"}, id: "anything", want: true},
		"prefix":          {globs: []string{"res*"}, id: "research", want: true},
		"no match":        {globs: []string{"ops-?"}, id: "ops-12"},
		"class":           {globs: []string{"ops-[0-9]"}, id: "ops-7", want: true},
		"bad pattern":     {globs: []string{"ops-["}, id: "ops-", invalid: true},
		"second glob hit": {globs: []string{"a", "b*"}, id: "bee", want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := MatchAny(tc.globs, tc.id); got != tc.want {
				t.Errorf("MatchAny = %v, want %v", got, tc.want)
			}
			var err error
			for _, g := range tc.globs {
				if e := ValidateGlob(g); e != nil {
					err = e
				}
			}
			if (err != nil) != tc.invalid {
				t.Errorf("ValidateGlob err = %v, want invalid=%v", err, tc.invalid)
			}
		})
	}
}
