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

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
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
	ops := &v1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "ops", Namespace: "ns"}}
	boxed := &v1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "box", Namespace: "ns"}, Spec: v1.AgentSpec{Sandbox: v1.SandboxSpec{Enabled: true}}}
	if got := ImpliedSession("agent:ops:discord:group:g", ops); got != nil {
		t.Errorf("only an Agent's main session is created on first send, got %+v", got.Spec)
	}
	if got := ImpliedSession("agent:ops:main", nil); got != nil {
		t.Errorf("no Agent, no session: got %+v", got.Spec)
	}
	if got := ImpliedSession("agent:box:main", boxed); got == nil || !got.Spec.Sandboxed {
		t.Errorf("a sandboxed Agent's main session is sandboxed, got %+v", got)
	}
	implied := ImpliedSession("agent:ops:main", ops)
	deny := &v1.SendPolicySpec{Rules: []v1.SendRule{{Match: v1.SendRuleMatch{KeyPrefix: "agent:ops:"}, Action: v1.ActionDeny}}}
	if d := TurnAllowed(deny, implied); d.Allowed || d.Rule != 1 {
		t.Errorf("the send policy must judge the implied session: %+v", d)
	}
	directDeny := &v1.SendPolicySpec{Rules: []v1.SendRule{{Match: v1.SendRuleMatch{ChatType: v1.ChatTypeDirect}, Action: v1.ActionDeny}}}
	if d := TurnAllowed(directDeny, implied); d.Allowed {
		t.Errorf("a main session is direct, as an existing one: %+v", d)
	}
	research := &v1.AgentSession{Spec: v1.AgentSessionSpec{Key: "agent:research:main", AgentID: "research"}}
	ok, why := Visible(v1.VisibilityAll, v1.AgentToAgentSpec{Enabled: true, Allow: []string{"research"}}, research, implied, func(string) (string, bool) { return "", false })
	if ok || !strings.Contains(why, "agentToAgent.allow") {
		t.Errorf("agent-to-agent allow must judge the implied session: %v %q", ok, why)
	}
}

func TestHops(t *testing.T) {
	limit3 := &v1.SessionPolicySpec{Limits: &v1.ChainLimits{MaxHops: ptr.To[int32](3)}}
	cases := map[string]struct {
		ann      map[string]string
		p        *v1.SessionPolicySpec
		wantNext int
		wantDeny bool
	}{
		"a person's object starts a chain": {ann: nil, wantNext: 1},
		"hop 7 makes hop 8, the default":   {ann: map[string]string{v1.HopsAnnotation: "7"}, wantNext: 8},
		"hop 8 makes hop 9, over":          {ann: map[string]string{v1.HopsAnnotation: "8"}, wantNext: 9, wantDeny: true},
		"the policy's limit":               {ann: map[string]string{v1.HopsAnnotation: "3"}, p: limit3, wantNext: 4, wantDeny: true},
		"a malformed count is over":        {ann: map[string]string{v1.HopsAnnotation: "-1"}, wantNext: DefaultMaxHops + 1, wantDeny: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			next := NextHops(tc.ann)
			if next != tc.wantNext {
				t.Errorf("NextHops = %d, want %d", next, tc.wantNext)
			}
			deny := CheckHops(next, tc.p)
			if (deny != "") != tc.wantDeny || tc.wantDeny && !strings.Contains(deny, "spec.limits.maxHops") {
				t.Errorf("CheckHops(%d) = %q, want denial %v", next, deny, tc.wantDeny)
			}
		})
	}
	if _, err := HopsOf(map[string]string{v1.HopsAnnotation: "x"}); err == nil {
		t.Error("HopsOf accepted a non-number")
	}
	if got := ToolCreatesPerMinute(&v1.SessionPolicySpec{Limits: &v1.ChainLimits{ToolCreatesPerMinute: ptr.To[int32](7)}}, 60); got != 7 {
		t.Errorf("the policy's rate wins: %d", got)
	}
	if got := ToolCreatesPerMinute(nil, 60); got != 60 {
		t.Errorf("the operator's default applies: %d", got)
	}
}

func TestSecretRules(t *testing.T) {
	vouched := map[string]string{v1.VouchedSecretsAnnotation: FormatVouched([]string{"b", "a", "b"})}
	if diff := cmp.Diff([]string{"a", "b"}, Vouched(vouched)); diff != "" {
		t.Errorf("Vouched (-want +got):\n%s", diff)
	}
	optIn := map[string]string{v1.AgentUsableLabel: "true"}
	cases := map[string]struct {
		name         string
		owner, label map[string]string
		want         bool
	}{
		"vouched by the writer":             {name: "a", owner: vouched, want: true},
		"opted in":                          {name: "c", label: optIn, want: true},
		"neither":                           {name: "c", owner: vouched},
		"a prefix of a vouched name":        {name: "", owner: vouched},
		"the label with another value":      {name: "c", label: map[string]string{v1.AgentUsableLabel: "yes"}},
		"no annotation and no metadata":     {name: "a"},
		"vouched list names another Secret": {name: "ab", owner: vouched},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SecretUsable(tc.name, tc.owner, tc.label); got != tc.want {
				t.Errorf("SecretUsable(%q) = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
	a := &v1.Agent{Spec: v1.AgentSpec{Model: v1.ModelSpec{APIKeySecretRef: nil}}}
	if refs := AgentSecretRefs(a); len(refs) != 0 {
		t.Errorf("no key, no refs: %v", refs)
	}
	if NeedsAPIKey(v1.ProviderOpenAI) || !NeedsAPIKey(v1.ProviderAnthropic) || NeedsAPIKey(v1.ProviderScripted) {
		t.Error("only anthropic needs a key")
	}
	if msg := UnusableSecret("k"); strings.Contains(msg, "not found") || strings.Contains(msg, "no key") {
		t.Errorf("the unusable message must not tell whether the Secret or key exists: %q", msg)
	}
}

func TestAgentUnready(t *testing.T) {
	a := &v1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 2}}
	if got := AgentUnready(a); got != "" {
		t.Errorf("an Agent not judged yet is not refused: %q", got)
	}
	a.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: "SecretNotUsable", Message: "m", ObservedGeneration: 1}}
	if got := AgentUnready(a); got != "" {
		t.Errorf("a verdict on an older generation does not count: %q", got)
	}
	a.Status.Conditions[0].ObservedGeneration = 2
	if got := AgentUnready(a); got != "Agent a is not Ready (SecretNotUsable): m" {
		t.Errorf("AgentUnready = %q", got)
	}
}
