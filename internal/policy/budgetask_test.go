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
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestJudgeBudgetOver(t *testing.T) {
	const exceeded = "budget exceeded: the run tree of subagentrun/r1 cost 1 of its maxCost \"1\""
	ask := &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxCost: "1"}, OnExceeded: sessionsv1alpha1.BudgetAsk}
	fail := &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxCost: "1"}, OnExceeded: sessionsv1alpha1.BudgetFail}
	cost := BudgetOver{Whose: "run tree r1", Resource: sessionsv1alpha1.BudgetCost, Used: 1e9, Limit: 1e9, Base: 1e9,
		Currency: "USD", Exceeded: exceeded, Policy: ask}
	costAsk := &sessionsv1alpha1.BudgetApproval{Resource: sessionsv1alpha1.BudgetCost, Spent: "1.00", Limit: "1.00", More: "0.50",
		Currency: "USD", Message: "run tree r1 spent 1.00 of 1.00 USD; approve to allow 0.50 more"}
	asked := func(phase sessionsv1alpha1.ApprovalPhase, by, reason string) *sessionsv1alpha1.ToolApproval {
		ta := &sessionsv1alpha1.ToolApproval{Spec: sessionsv1alpha1.ToolApprovalSpec{Kind: sessionsv1alpha1.ApprovalKindBudget,
			Budget: costAsk, Reason: reason}, Status: sessionsv1alpha1.ToolApprovalStatus{Phase: phase, DecidedBy: by}}
		ta.Name = "tap-1"
		return ta
	}
	with := func(f func(*BudgetOver)) BudgetOver { o := cost; f(&o); return o }
	ten := time.Duration(sessionsv1alpha1.DefaultApprovalTimeoutSeconds) * time.Second
	cases := map[string]struct {
		in   BudgetOver
		want BudgetVerdict
	}{
		"no policy budget fails as always": {with(func(o *BudgetOver) { o.Policy = nil }), BudgetVerdict{Fail: exceeded}},
		"onExceeded Fail fails":            {with(func(o *BudgetOver) { o.Policy = fail }), BudgetVerdict{Fail: exceeded}},
		"onExceeded unset fails":           {with(func(o *BudgetOver) { o.Policy = &sessionsv1alpha1.PolicyBudget{} }), BudgetVerdict{Fail: exceeded}},
		"Ask makes an ask for half again":  {cost, BudgetVerdict{Ask: costAsk, Timeout: ten}},
		"a carried limit is never asked": {with(func(o *BudgetOver) { o.Carried = true }),
			BudgetVerdict{Fail: exceeded + "; the limit reached is the budget the caller carried from another agent server, which no approval here raises"}},
		"a pending ask is waited on": {with(func(o *BudgetOver) { o.Asked = asked(sessionsv1alpha1.ApprovalPending, "", "") }),
			BudgetVerdict{Ask: costAsk}},
		"an undecided ask with no status is waited on": {with(func(o *BudgetOver) { o.Asked = asked("", "", "") }), BudgetVerdict{Ask: costAsk}},
		"a denied ask fails, saying who and why": {with(func(o *BudgetOver) { o.Asked = asked(sessionsv1alpha1.ApprovalDenied, "alice", "too dear") }),
			BudgetVerdict{Fail: exceeded + "; more was denied by alice: too dear (toolapproval/tap-1)"}},
		"an expired ask fails": {with(func(o *BudgetOver) { o.Asked = asked(sessionsv1alpha1.ApprovalExpired, "", "") }),
			BudgetVerdict{Fail: exceeded + "; nobody approved more in time (toolapproval/tap-1 expired)"}},
		"a second ask is at the raised limit": {with(func(o *BudgetOver) { o.Used, o.Limit = 1_500_000_000, 1_500_000_000 }),
			BudgetVerdict{Timeout: ten, Ask: &sessionsv1alpha1.BudgetApproval{Resource: sessionsv1alpha1.BudgetCost, Spent: "1.50", Limit: "1.50",
				More: "0.50", Currency: "USD", Message: "run tree r1 spent 1.50 of 1.50 USD; approve to allow 0.50 more"}}},
		"small costs keep their decimals": {with(func(o *BudgetOver) { o.Used, o.Limit, o.Base = 75_000_000, 75_000_000, 75_000_000 }),
			BudgetVerdict{Timeout: ten, Ask: &sessionsv1alpha1.BudgetApproval{Resource: sessionsv1alpha1.BudgetCost, Spent: "0.075", Limit: "0.075",
				More: "0.0375", Currency: "USD", Message: "run tree r1 spent 0.075 of 0.075 USD; approve to allow 0.0375 more"}}},
		"turns round half up, with the policy's timeout": {BudgetOver{Whose: "send s1", Resource: sessionsv1alpha1.BudgetTurns, Used: 3, Limit: 3, Base: 3,
			Exceeded: "budget exceeded: the send would begin turn 4, over its maxTurns 3",
			Policy:   &sessionsv1alpha1.PolicyBudget{OnExceeded: sessionsv1alpha1.BudgetAsk, AskTimeoutSeconds: ptr.To[int32](60)}},
			BudgetVerdict{Timeout: time.Minute, Ask: &sessionsv1alpha1.BudgetApproval{Resource: sessionsv1alpha1.BudgetTurns, Spent: "3", Limit: "3", More: "2",
				Message: "send s1 spent 3 of 3 turns; approve to allow 2 more"}}},
		"a limit of one turn allows one more": {BudgetOver{Whose: "send s1", Resource: sessionsv1alpha1.BudgetTurns, Used: 1, Limit: 1, Base: 1, Policy: ask},
			BudgetVerdict{Timeout: ten, Ask: &sessionsv1alpha1.BudgetApproval{Resource: sessionsv1alpha1.BudgetTurns, Spent: "1", Limit: "1", More: "1",
				Message: "send s1 spent 1 of 1 turns; approve to allow 1 more"}}},
		"tokens": {BudgetOver{Whose: "run tree r1", Resource: sessionsv1alpha1.BudgetTokens, Used: 2412, Limit: 2000, Base: 2000, Policy: ask},
			BudgetVerdict{Timeout: ten, Ask: &sessionsv1alpha1.BudgetApproval{Resource: sessionsv1alpha1.BudgetTokens, Spent: "2412", Limit: "2000", More: "1000",
				Message: "run tree r1 spent 2412 of 2000 tokens; approve to allow 1000 more"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, JudgeBudgetOver(tc.in)); d != "" {
				t.Errorf("JudgeBudgetOver (-want +got):\n%s", d)
			}
		})
	}
}
