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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestCheckChildKey(t *testing.T) {
	const u = "0b6f9a3e-1111-4222-8333-444455556666"
	cases := map[string]struct {
		hint, agent string
		exists      bool
		want        string // a piece of the denial; "" = accepted
	}{
		"a new child of the agent":       {hint: "agent:research:subagent:" + u, agent: "research"},
		"an existing session":            {hint: "agent:research:subagent:" + u, agent: "research", exists: true, want: "already exists"},
		"another agent's child":          {hint: "agent:main:subagent:" + u, agent: "research", want: "agent:research:subagent:<uuid>"},
		"a main session":                 {hint: "agent:research:main", agent: "research", want: "with a lower-case UUID"},
		"not a uuid":                     {hint: "agent:research:subagent:x", agent: "research", want: "with a lower-case UUID"},
		"an upper-case uuid":             {hint: "agent:research:subagent:" + strings.ToUpper(u), agent: "research", want: "lower-case UUID"},
		"a uuid followed by more":        {hint: "agent:research:subagent:" + u + ":x", agent: "research", want: "lower-case UUID"},
		"a uuid in braces (Parse takes)": {hint: "agent:research:subagent:{" + u + "}", agent: "research", want: "lower-case UUID"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := CheckChildKey(tc.hint, tc.agent, tc.exists)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("CheckChildKey(%q, %q, %v) = %q, want %q", tc.hint, tc.agent, tc.exists, got, tc.want)
			}
		})
	}
}

func TestImpliedSessionIsJudgedAsIfItExisted(t *testing.T) {
	ops := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "ops", Namespace: "ns"}}
	boxed := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "box", Namespace: "ns"}, Spec: sessionsv1alpha1.AgentSpec{Sandbox: sessionsv1alpha1.SandboxSpec{Enabled: true}}}
	if got := ImpliedSession("agent:ops:discord:group:g", ops); got != nil {
		t.Errorf("only an Agent's main session is created on first send, got %+v", got.Spec)
	}
	if got := ImpliedSession("agent:ops:main", nil); got != nil {
		t.Errorf("no Agent, no session: got %+v", got.Spec)
	}
	if got := ImpliedSession("agent:box:main", boxed); got == nil || !Sandboxed(got, boxed) {
		t.Errorf("a sandboxed Agent's main session is sandboxed, got %+v", got)
	}
	implied := ImpliedSession("agent:ops:main", ops)
	deny := &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{KeyPrefix: "agent:ops:"}, Action: sessionsv1alpha1.ActionDeny}}}
	if d := TurnAllowed(deny, implied); d.Allowed || d.Rule != 1 {
		t.Errorf("the send policy must judge the implied session: %+v", d)
	}
	directDeny := &sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{ChatType: sessionsv1alpha1.ChatTypeDirect}, Action: sessionsv1alpha1.ActionDeny}}}
	if d := TurnAllowed(directDeny, implied); d.Allowed {
		t.Errorf("a main session is direct, as an existing one: %+v", d)
	}
	research := &sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:research:main", AgentID: "research"}}
	ok, why := Visible(sessionsv1alpha1.VisibilityAll, sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"research"}}, research, implied, func(string) (string, bool) { return "", false })
	if ok || !strings.Contains(why, "agentToAgent.allow") {
		t.Errorf("agent-to-agent allow must judge the implied session: %v %q", ok, why)
	}
}
