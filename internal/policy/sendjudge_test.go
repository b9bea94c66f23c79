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
	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// verdict is a refusal as a person reads it: 422 with the field, 403, or admitted.
type verdict struct {
	Code, Field, Says string
}

func verdictOf(r *Refusal) verdict {
	switch {
	case r == nil:
		return verdict{Code: "admitted"}
	case len(r.Invalid) > 0:
		return verdict{Code: "422", Field: r.Invalid[0].Field, Says: r.Invalid[0].Error()}
	}
	return verdict{Code: "403", Says: r.Forbidden}
}

// sameVerdict fails t unless r is want, its message checked by the part that names the rule.
func sameVerdict(t *testing.T, want verdict, r *Refusal) {
	t.Helper()
	got := verdictOf(r)
	if strings.Contains(got.Says, want.Says) {
		got.Says = want.Says
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdict (-want +got):\n%s", diff)
	}
}

// TestJudgeSend holds every refusal of a send at admission (docs/concepts/policy-and-visibility.md,
// docs/operations/security.md, docs/operations/troubleshooting.md) but the chain limits, which
// the webhook asks after the judge because they count what they admit.
func TestJudgeSend(t *testing.T) {
	session := func(key, agent string) *sessionsv1alpha1.AgentSession {
		return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s-" + agent, Namespace: "ns"},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agent}}
	}
	ops := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "ops", Namespace: "ns"}}
	bob := session("agent:bob:main", "bob")
	alice := session("agent:alice:main", "alice")
	allowAll := &sessionsv1alpha1.SessionPolicy{Spec: sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityAll,
		AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}}}}
	denyBob := &sessionsv1alpha1.SessionPolicy{Spec: sessionsv1alpha1.SessionPolicySpec{SendPolicy: sessionsv1alpha1.SendPolicySpec{
		Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{KeyPrefix: "agent:bob:"}, Action: sessionsv1alpha1.ActionDeny}}}}}
	noParent := func(string) (string, bool) { return "", false }
	person := func(mut ...func(*SendAdmission)) SendAdmission {
		a := SendAdmission{SendFacts: SendFacts{Namespace: "ns", Ref: "agent:bob:main", Key: "agent:bob:main", Target: bob, ParentOf: noParent}, User: "carol"}
		for _, m := range mut {
			m(&a)
		}
		return a
	}
	fromAlice := func(a *SendAdmission) {
		a.From, a.Requester, a.RequesterAgentID, a.MayActAs, a.Policy = alice.Spec.Key, alice, "alice", true, allowAll
	}
	on := &SendCommand{Word: "on", Policy: sessionsv1alpha1.ActionAllow}
	cases := map[string]struct {
		in   SendAdmission
		want verdict
	}{
		"a person's send is admitted":            {in: person(), want: verdict{Code: "admitted"}},
		"an agent's send it may see is admitted": {in: person(fromAlice), want: verdict{Code: "admitted"}},
		"the first send to an Agent's main session is admitted": {in: person(func(a *SendAdmission) {
			a.Ref, a.Key, a.Target, a.Implied = "agent:ops:main", "agent:ops:main", ImpliedSession("agent:ops:main", ops), true
		}), want: verdict{Code: "admitted"}},
		"a manager-only mark": {in: person(func(a *SendAdmission) {
			a.ForgedMark = "annotation sessions.agents.dev/hops is set only by the operator's session tools"
		}),
			want: verdict{Code: "403", Says: "annotation sessions.agents.dev/hops is set only by the operator's session tools"}},
		"a starter label": {in: person(func(a *SendAdmission) {
			a.StarterMarks = field.ErrorList{field.Forbidden(field.NewPath("metadata", "labels"), "sessions.agents.dev/schedule is set only by the manager")}
		}), want: verdict{Code: "422", Field: "metadata.labels", Says: "metadata.labels: Forbidden: sessions.agents.dev/schedule is set only by the manager"}},
		"speaking for a session without act-as": {in: person(fromAlice, func(a *SendAdmission) { a.MayActAs = false }),
			want: verdict{Code: "403", Says: ActAsDenial("carol", "agent:alice:main", "spec.fromSessionKey")}},
		"a requester no session has": {in: person(fromAlice, func(a *SendAdmission) { a.Requester = nil }),
			want: verdict{Code: "422", Field: "spec.fromSessionKey", Says: "Agent alice does not exist in namespace ns"}},
		"main without a requester": {in: person(func(a *SendAdmission) { a.Ref, a.Key, a.Target, a.MainWithoutRequester = "main", "", nil, true }),
			want: verdict{Code: "422", Field: "spec.sessionKey", Says: MainWithoutRequester}},
		"a key outside the grammar": {in: person(func(a *SendAdmission) { a.Ref, a.Key, a.Target = "nope", "nope", nil }),
			want: verdict{Code: "422", Field: "spec.sessionKey", Says: "not a valid session key"}},
		"the main session of an Agent that does not exist": {in: person(func(a *SendAdmission) { a.Ref, a.Key, a.Target = "agent:ghost:main", "agent:ghost:main", nil }),
			want: verdict{Code: "422", Field: "spec.sessionKey", Says: "Agent ghost does not exist in namespace ns; create the Agent first"}},
		"a key no session has": {in: person(func(a *SendAdmission) {
			a.Ref, a.Key, a.Target, a.KeyAgent = "agent:ops:discord:group:g", "agent:ops:discord:group:g", nil, ops
		}), want: verdict{Code: "422", Field: "spec.sessionKey", Says: "no AgentSession in namespace ns has this key or sessionId"}},
		"a target the requester may not see": {in: person(fromAlice, func(a *SendAdmission) { a.Policy = nil }),
			want: verdict{Code: "403", Says: "send denied: "}},
		"a session's /send command": {in: person(fromAlice, func(a *SendAdmission) { a.Command = on }),
			want: verdict{Code: "403", Says: "session agent:alice:main may not send it"}},
		"a person's /send command without set-send-policy": {in: person(func(a *SendAdmission) { a.Command = on }),
			want: verdict{Code: "403", Says: `user "carol" may not send /send on into session agent:bob:main`}},
		"a person's /send command with set-send-policy, whatever the send policy": {in: person(func(a *SendAdmission) {
			a.Command, a.MayCommand, a.Policy = on, true, denyBob
		}), want: verdict{Code: "admitted"}},
		"the send policy": {in: person(func(a *SendAdmission) { a.Policy = denyBob }),
			want: verdict{Code: "403", Says: "send denied by sessionPolicy default rule 1 (keyPrefix=agent:bob: -> deny)"}},
		"a spent budget": {in: person(func(a *SendAdmission) { a.BudgetDenial = "namespace budget spent until 10:00" }),
			want: verdict{Code: "403", Says: "namespace budget spent until 10:00"}},
		"the first refusal wins": {in: person(fromAlice, func(a *SendAdmission) { a.MayActAs, a.ForgedMark = false, "forged" }),
			want: verdict{Code: "403", Says: "forged"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { sameVerdict(t, tc.want, JudgeSend(tc.in)) })
	}
}
