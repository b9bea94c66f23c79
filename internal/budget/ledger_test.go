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

package budget

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

const ns = "team"

var epoch = time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC)

func policyWith(b *sessionsv1alpha1.Budgets, spend *sessionsv1alpha1.Spend) *sessionsv1alpha1.SessionPolicy {
	return &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
		Spec: sessionsv1alpha1.SessionPolicySpec{Budgets: b}, Status: sessionsv1alpha1.SessionPolicyStatus{Spend: spend}}
}

// send is the SessionSend "s" (uid u1) of the tables.
func send(b *sessionsv1alpha1.Budget) *sessionsv1alpha1.SessionSend {
	return &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s", UID: "u1"}, Spec: sessionsv1alpha1.SessionSendSpec{Budget: b}}
}

// carrying is s with a chain its caller carried through a door.
func carrying(s *sessionsv1alpha1.SessionSend, chain string) *sessionsv1alpha1.SessionSend {
	s.Annotations = map[string]string{sessionsv1alpha1.CarriedChainAnnotation: chain}
	return s
}

func call(owner string, uid types.UID, step string, purpose Purpose) Call {
	kind := OwnerSessionSend
	if owner == "" {
		kind = "AgentSession"
	}
	return Call{Namespace: ns, Turn: string(uid) + "/" + step, OwnerKind: kind,
		Owner: types.NamespacedName{Namespace: ns, Name: owner}, OwnerUID: uid, Purpose: purpose}
}

func newLedger(t *testing.T, objs ...client.Object) (*Ledger, *clocktesting.FakeClock) {
	t.Helper()
	c := testenv.IndexFake(fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...)).Build()
	clk := clocktesting.NewFakeClock(epoch)
	return NewLedger(c, clk), clk
}

// step is a judge (charge zero) or a judge then a charge of tokens.
type step struct {
	call   Call
	charge int64
}

// TestJudgeThenCharge plays model calls against the ledger: each is judged, and charged
// when the judge lets it through; the table says which judge refuses, and why.
func TestJudgeThenCharge(t *testing.T) {
	window := &sessionsv1alpha1.NamespaceBudget{Window: metav1.Duration{Duration: 24 * time.Hour}, MaxTokens: ptr.To[int64](100)}
	for name, tc := range map[string]struct {
		objs    []client.Object
		steps   []step
		refused map[int]string
	}{
		"a send's third turn is over its maxTurns 2; its announce is not stopped": {
			objs: []client.Object{policyWith(nil, nil), send(&sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](2)})},
			steps: []step{{call("s", "u1", "round-1", PurposeTurn), 5}, {call("s", "u1", "round-1", PurposeTurn), 5},
				{call("s", "u1", "round-2", PurposeTurn), 5}, {call("s", "u1", "round-3", PurposeTurn), 5},
				{call("s", "u1", "announce", PurposeTurn), 5}},
			refused: map[int]string{3: "budget exceeded: the send would begin turn 3, over its maxTurns 2"},
		},
		"a spent window refuses turns and compactions, a session's own compaction and an announce's too": {
			objs: []client.Object{policyWith(&sessionsv1alpha1.Budgets{Namespace: window}, nil), send(nil)},
			steps: []step{{call("s", "u1", "round-1", PurposeTurn), 100}, {call("s", "u1", "round-2", PurposeCompaction), 1},
				{call("", "u9", "compact-1", PurposeCompaction), 1}, {call("s", "u1", "announce", PurposeTurn), 1},
				{call("s", "u1", "announce", PurposeCompaction), 1}},
			refused: map[int]string{
				1: "namespace budget spent: the namespace's turns used 100 tokens of its maxTokens 100 in the 24h0m0s window since 2026-11-28T00:00:00Z (SessionPolicy spec.budgets.namespace); the window resets at 2026-11-29T00:00:00Z",
				2: "namespace budget spent: the namespace's turns used 100 tokens of its maxTokens 100 in the 24h0m0s window since 2026-11-28T00:00:00Z (SessionPolicy spec.budgets.namespace); the window resets at 2026-11-29T00:00:00Z",
				4: "namespace budget spent: the namespace's turns used 101 tokens of its maxTokens 100 in the 24h0m0s window since 2026-11-28T00:00:00Z (SessionPolicy spec.budgets.namespace); the window resets at 2026-11-29T00:00:00Z",
			},
		},
		"a compaction is charged to the window": {
			objs:    []client.Object{policyWith(&sessionsv1alpha1.Budgets{Namespace: window}, nil)},
			steps:   []step{{call("", "u9", "compact-1", PurposeCompaction), 100}, {call("", "u9", "compact-2", PurposeCompaction), 1}},
			refused: map[int]string{1: "namespace budget spent: the namespace's turns used 100 tokens of its maxTokens 100 in the 24h0m0s window since 2026-11-28T00:00:00Z (SessionPolicy spec.budgets.namespace); the window resets at 2026-11-29T00:00:00Z"},
		},
		"the window goes on from the recorded spend": {
			objs: []client.Object{policyWith(&sessionsv1alpha1.Budgets{Namespace: window},
				&sessionsv1alpha1.Spend{WindowStart: &metav1.Time{Time: time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)}, Tokens: 99}), send(nil)},
			steps:   []step{{call("s", "u1", "round-1", PurposeTurn), 1}, {call("s", "u1", "round-2", PurposeTurn), 1}},
			refused: map[int]string{1: "namespace budget spent: the namespace's turns used 100 tokens of its maxTokens 100 in the 24h0m0s window since 2026-11-28T00:00:00Z (SessionPolicy spec.budgets.namespace); the window resets at 2026-11-29T00:00:00Z"},
		},
		"the policy's perSend fills what the send's budget leaves": {
			objs:    []client.Object{policyWith(&sessionsv1alpha1.Budgets{PerSend: &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](10)}}}, nil), send(nil)},
			steps:   []step{{call("s", "u1", "round-1", PurposeTurn), 10}, {call("s", "u1", "round-1", PurposeTurn), 1}},
			refused: map[int]string{1: "budget exceeded: the send used 10 tokens of its maxTokens 10"},
		},
		"a send that arrived through a door carrying a smaller budget is held to it": {
			objs: []client.Object{policyWith(&sessionsv1alpha1.Budgets{PerSend: &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](5)}}}, nil),
				carrying(send(nil), `{"id":"x","hops":1,"sends":1,"budget":{"maxTurns":1}}`)},
			steps:   []step{{call("s", "u1", "round-1", PurposeTurn), 1}, {call("s", "u1", "round-2", PurposeTurn), 1}},
			refused: map[int]string{1: "budget exceeded: the send would begin turn 2, over its maxTurns 1"},
		},
		"a send whose caller claims a larger budget gets the policy's": {
			objs: []client.Object{policyWith(&sessionsv1alpha1.Budgets{PerSend: &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](1)}}}, nil),
				carrying(send(nil), `{"id":"x","hops":1,"sends":1,"budget":{"maxTurns":1000,"maxTokens":1000000000}}`)},
			steps:   []step{{call("s", "u1", "round-1", PurposeTurn), 1}, {call("s", "u1", "round-2", PurposeTurn), 1}},
			refused: map[int]string{1: "budget exceeded: the send would begin turn 2, over its maxTurns 1"},
		},
		"no policy, no budget": {
			objs:  []client.Object{send(nil)},
			steps: []step{{call("s", "u1", "round-1", PurposeTurn), 1000}, {call("s", "u1", "round-1", PurposeCompaction), 1000}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			l, _ := newLedger(t, tc.objs...)
			ctx := context.Background()
			got := map[int]string{}
			for i, s := range tc.steps {
				if err := l.Judge(ctx, s.call); err != nil {
					if !errors.Is(err, ErrExceeded) {
						t.Fatalf("step %d: %v does not match ErrExceeded", i, err)
					}
					got[i] = err.Error()
					continue
				}
				l.Charge(ctx, s.call, usage.Turn{Input: s.charge})
			}
			if d := cmp.Diff(tc.refused, got, cmpEmptyMap); d != "" {
				t.Errorf("refusals (-want +got):\n%s", d)
			}
		})
	}
}

var cmpEmptyMap = cmp.Transformer("nilmap", func(m map[int]string) map[int]string {
	if m == nil {
		return map[int]string{}
	}
	return m
})

// TestRunTreeHoldsItsChildren: what a run's child run uses counts in the parent's tree.
func TestRunTreeHoldsItsChildren(t *testing.T) {
	parent := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r1", UID: "p1"},
		Spec: sessionsv1alpha1.SubagentRunSpec{Budget: &sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](50)}}}
	childSession := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: "SubagentRun", Name: "r1", UID: "p1", Controller: ptr.To(true)}}},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:w:subagent:c1", AgentID: "w"}}
	child := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r2", UID: "c2"},
		Spec: sessionsv1alpha1.SubagentRunSpec{RequesterSessionKey: "agent:w:subagent:c1"}}
	l, _ := newLedger(t, parent, childSession, child)
	ctx := context.Background()
	run := func(name string, uid types.UID) Call {
		return Call{Namespace: ns, Turn: string(uid) + "/task", OwnerKind: OwnerSubagentRun,
			Owner: types.NamespacedName{Namespace: ns, Name: name}, OwnerUID: uid, Purpose: PurposeTurn}
	}
	if err := l.Judge(ctx, run("r2", "c2")); err != nil {
		t.Fatal(err)
	}
	l.Charge(ctx, run("r2", "c2"), usage.Turn{Input: 40, Output: 10})
	err := l.Judge(ctx, run("r2", "c2"))
	if err == nil || err.Error() != "budget exceeded: the run tree of subagentrun/r1 used 50 tokens of its maxTokens 50" {
		t.Fatalf("judge after the child's call: %v", err)
	}
	if _, tree, ok := l.Spent("p1"); !ok || tree.Tokens != 50 || tree.Turns != 1 {
		t.Errorf("parent's tree %+v (known %v), want 50 tokens and the child's turn", tree, ok)
	}
}

// TestWindowSpendWakesOnce: a charge wakes the SessionPolicy controller once until it reads
// the spend; a new window starts empty.
func TestWindowSpendWakesOnce(t *testing.T) {
	b := &sessionsv1alpha1.Budgets{Namespace: &sessionsv1alpha1.NamespaceBudget{Window: metav1.Duration{Duration: time.Hour}, MaxCost: "1"}}
	p := policyWith(b, nil)
	l, clk := newLedger(t, p)
	ctx := context.Background()
	c := call("", "u9", "compact-1", PurposeCompaction)
	l.Charge(ctx, c, usage.Turn{Input: 3, Output: 4, CostNanos: 250_000_000})
	l.Charge(ctx, c, usage.Turn{Input: 3})
	if n := len(l.Wakes()); n != 1 {
		t.Fatalf("%d wakes queued, want 1", n)
	}
	<-l.Wakes()
	s, changed := l.WindowSpend(p)
	start := metav1.NewTime(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC))
	if d := cmp.Diff(&sessionsv1alpha1.Spend{WindowStart: &start, Tokens: 10, Cost: "0.25"}, s); d != "" || !changed {
		t.Errorf("spend (changed %v) (-want +got):\n%s", changed, d)
	}
	if _, changed := l.WindowSpend(p); changed {
		t.Error("read twice: still changing")
	}
	clk.Step(time.Hour)
	s, _ = l.WindowSpend(p)
	if s.Tokens != 0 || s.Cost != "" || !s.WindowStart.Time.Equal(start.Add(time.Hour)) {
		t.Errorf("a new window: %+v", s)
	}
}

func TestAdmit(t *testing.T) {
	day := metav1.Duration{Duration: 24 * time.Hour}
	today := &metav1.Time{Time: time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)}
	yesterday := &metav1.Time{Time: today.Add(-24 * time.Hour)}
	ns := &sessionsv1alpha1.NamespaceBudget{Window: day, MaxTokens: ptr.To[int64](10)}
	for name, tc := range map[string]struct {
		pol    *sessionsv1alpha1.SessionPolicy
		own    *sessionsv1alpha1.Budget
		perRun bool
		want   string
	}{
		"no policy":        {},
		"no budgets":       {pol: policyWith(nil, nil)},
		"window not spent": {pol: policyWith(&sessionsv1alpha1.Budgets{Namespace: ns}, &sessionsv1alpha1.Spend{WindowStart: today, Tokens: 9})},
		"window spent": {pol: policyWith(&sessionsv1alpha1.Budgets{Namespace: ns}, &sessionsv1alpha1.Spend{WindowStart: today, Tokens: 10}),
			want: "namespace budget spent: the namespace's turns used 10 tokens of its maxTokens 10 in the 24h0m0s window since 2026-11-28T00:00:00Z (SessionPolicy spec.budgets.namespace); the window resets at 2026-11-29T00:00:00Z"},
		"spent in a past window": {pol: policyWith(&sessionsv1alpha1.Budgets{Namespace: ns}, &sessionsv1alpha1.Spend{WindowStart: yesterday, Tokens: 10})},
		"a run above perRun": {pol: policyWith(&sessionsv1alpha1.Budgets{PerRun: &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](3)}}}, nil),
			own: &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](4)}, perRun: true,
			want: "budget above the policy: spec.budget maxTurns 4 is above 3, the most SessionPolicy spec.budgets.perRun allows; lower spec.budget or ask a namespace admin to raise the policy"},
		"a send under perSend": {pol: policyWith(&sessionsv1alpha1.Budgets{PerSend: &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](3)}}}, nil),
			own: &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](3)}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Admit(tc.pol, tc.own, tc.perRun, epoch); got != tc.want {
				t.Errorf("Admit = %q, want %q", got, tc.want)
			}
		})
	}
}
