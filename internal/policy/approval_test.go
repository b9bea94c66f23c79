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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestApprovalFor(t *testing.T) {
	rules := func(rs ...sessionsv1alpha1.ToolApprovalRule) *sessionsv1alpha1.ApprovalPolicy {
		return &sessionsv1alpha1.ApprovalPolicy{Rules: rs}
	}
	rule := func(a sessionsv1alpha1.ApprovalAction, secs int32, globs ...string) sessionsv1alpha1.ToolApprovalRule {
		r := sessionsv1alpha1.ToolApprovalRule{Tools: globs, Action: a}
		if secs > 0 {
			r.TimeoutSeconds = ptr.To(secs)
		}
		return r
	}
	cases := map[string]struct {
		admin, agent *sessionsv1alpha1.ApprovalPolicy
		tool         string
		want         ApprovalVerdict
	}{
		"no rules allow": {tool: "mcp__db__drop"},
		"agent requires, default timeout": {agent: rules(rule(sessionsv1alpha1.ApprovalRequire, 0, "mcp__db__*")), tool: "mcp__db__drop",
			want: ApprovalVerdict{Require: true, Timeout: 600 * time.Second, Rule: "Agent spec.tools.approval.rules[0]"}},
		"first match wins": {agent: rules(rule(sessionsv1alpha1.ApprovalAllow, 0, "mcp__db__read"), rule(sessionsv1alpha1.ApprovalRequire, 0, "mcp__db__*")), tool: "mcp__db__read"},
		"no match allows":  {agent: rules(rule(sessionsv1alpha1.ApprovalRequire, 0, "mcp__github__create_*")), tool: "mcp__github__list"},
		"agent allow cannot loosen admin require": {admin: rules(rule(sessionsv1alpha1.ApprovalRequire, 30, "mcp__*")),
			agent: rules(rule(sessionsv1alpha1.ApprovalAllow, 0, "*")), tool: "mcp__db__drop",
			want: ApprovalVerdict{Require: true, Timeout: 30 * time.Second, Rule: "SessionPolicy spec.toolApproval.rules[0]"}},
		"admin allow does not loosen agent require": {admin: rules(rule(sessionsv1alpha1.ApprovalAllow, 0, "*")),
			agent: rules(rule(sessionsv1alpha1.ApprovalRequire, 60, "sessions_send")), tool: "sessions_send",
			want: ApprovalVerdict{Require: true, Timeout: 60 * time.Second, Rule: "Agent spec.tools.approval.rules[0]"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, ApprovalFor(tc.admin, tc.agent, tc.tool)); d != "" {
				t.Error(d)
			}
		})
	}
}

func TestJudgeApproval(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	base := &sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: "tap-1"}, Spec: sessionsv1alpha1.ToolApprovalSpec{
		SessionKey: "agent:a:main", AgentID: "a", Tool: "mcp__db__drop", Owner: sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: "s"},
		ExpiresAt: metav1.NewTime(t0.Add(time.Hour))}}
	decided := func(d sessionsv1alpha1.ApprovalDecision, by string) *sessionsv1alpha1.ToolApproval {
		o := base.DeepCopy()
		o.Spec.Decision = d
		if by != "" {
			o.Annotations = map[string]string{sessionsv1alpha1.DecidedByAnnotation: by}
		}
		return o
	}
	expired := base.DeepCopy()
	expired.Status.Phase = sessionsv1alpha1.ApprovalExpired
	cases := map[string]struct {
		c    ApprovalChange
		want string // the refused field path, "" to allow
	}{
		"manager creates":        {c: ApprovalChange{Cur: base, Manager: true}},
		"a user cannot create":   {c: ApprovalChange{Cur: base, User: "alice", MayApprove: true}, want: "metadata"},
		"created decided":        {c: ApprovalChange{Cur: decided(sessionsv1alpha1.DecisionApproved, ""), Manager: true}, want: "spec.decision"},
		"created with decidedBy": {c: ApprovalChange{Cur: decided("", "alice"), Manager: true}, want: "metadata.annotations[sessions.agents.dev/decided-by]"},
		"approver decides":       {c: ApprovalChange{Old: base, Cur: decided(sessionsv1alpha1.DecisionApproved, "alice"), User: "alice", MayApprove: true}},
		"without approve":        {c: ApprovalChange{Old: base, Cur: decided(sessionsv1alpha1.DecisionDenied, "eve"), User: "eve"}, want: "spec.decision"},
		"manager cannot decide":  {c: ApprovalChange{Old: base, Cur: decided(sessionsv1alpha1.DecisionApproved, "m"), User: "m", Manager: true}, want: "spec.decision"},
		"decided once":           {c: ApprovalChange{Old: decided(sessionsv1alpha1.DecisionDenied, "a"), Cur: decided(sessionsv1alpha1.DecisionApproved, "a"), User: "a", MayApprove: true}, want: "spec.decision"},
		"not after expiry":       {c: ApprovalChange{Old: expired, Cur: decided(sessionsv1alpha1.DecisionApproved, "alice"), User: "alice", MayApprove: true}, want: "spec.decision"},
		"past expiresAt, still pending": {c: ApprovalChange{Old: base, Cur: decided(sessionsv1alpha1.DecisionApproved, "alice"), User: "alice", MayApprove: true, Now: t0.Add(time.Hour + time.Second)},
			want: "spec.decision"},
		"at expiresAt":           {c: ApprovalChange{Old: base, Cur: decided(sessionsv1alpha1.DecisionDenied, "alice"), User: "alice", MayApprove: true, Now: t0.Add(time.Hour)}, want: "spec.decision"},
		"a second before expiry": {c: ApprovalChange{Old: base, Cur: decided(sessionsv1alpha1.DecisionApproved, "alice"), User: "alice", MayApprove: true, Now: t0.Add(time.Hour - time.Second)}},
		"forged decidedBy": {c: ApprovalChange{Old: base, Cur: decided(sessionsv1alpha1.DecisionApproved, "bob"), User: "alice", MayApprove: true},
			want: "metadata.annotations[sessions.agents.dev/decided-by]"},
		"decidedBy changed later": {c: ApprovalChange{Old: decided(sessionsv1alpha1.DecisionApproved, "alice"), Cur: decided(sessionsv1alpha1.DecisionApproved, "bob"), User: "bob", MayApprove: true},
			want: "metadata.annotations[sessions.agents.dev/decided-by]"},
		"other spec fields immutable": {c: ApprovalChange{Old: base, Cur: func() *sessionsv1alpha1.ToolApproval { o := base.DeepCopy(); o.Spec.Tool = "x"; return o }(), User: "alice", MayApprove: true}, want: "spec"},
		"status by a user":            {c: ApprovalChange{Old: base, Cur: base, User: "alice", Status: true, MayApprove: true}, want: "status"},
		"status by the manager":       {c: ApprovalChange{Old: base, Cur: expired, Manager: true, Status: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.c.Now.IsZero() {
				tc.c.Now = t0
			}
			if got := fieldOf(JudgeApproval(tc.c)); got != tc.want {
				t.Errorf("refused at %q, want %q", got, tc.want)
			}
		})
	}
}
