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
	"strings"

	"k8s.io/klog/v2"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// Judge implements Gate: whether the call may be made, against its send's budget (or each
// run tree that holds its run) and the namespace's window. It reads the cache only and
// changes nothing. A turn's first call is judged as the turn it begins (maxTurns). An
// announce step's turn call is never refused: it is how the requester hears that a run
// stopped; its compaction call is. A turn's call over a budget whose SessionPolicy says
// onExceeded: Ask gets an *AskError instead of a refusal (policy.JudgeBudgetOver).
func (l *Ledger) Judge(ctx context.Context, c Call) error {
	if c.Purpose != PurposeCompaction && c.Purpose != PurposeEmbedding && announceStep(c.Turn) {
		return nil
	}
	pol, err := l.policy(ctx, c.Namespace)
	if err != nil {
		return err
	}
	o := l.ownerOf(ctx, c)
	if err := l.judge(ctx, c, o, pol); err != nil {
		klog.FromContext(ctx).V(2).Info("model call refused by a budget", "turn", c.Turn, "purpose", c.Purpose, "why", err.Error())
		return err
	}
	return nil
}

// held is one budget that holds a call, with what it has spent counting the call's turn.
type held struct {
	h     *owner
	def   *sessionsv1alpha1.PolicyBudget
	spent usage.Spent
	// whose names it in a stop's reason, short in an ask's message.
	whose, short string
}

// judge is nil when the call is within every budget that holds it: its owner's, a tree's
// that holds it, the namespace's window; else Exceeded or an *AskError.
func (l *Ledger) judge(ctx context.Context, c Call, o *owner, pol *sessionsv1alpha1.SessionPolicy) error {
	b := budgetsOf(pol)
	now := l.clock.Now()
	var holds []held
	l.mu.Lock()
	var begins usage.Spent
	if _, counted := l.turns[c.Turn]; !counted {
		begins.Turns = 1
	}
	switch {
	case o == nil:
	case o.kind == OwnerSessionSend:
		holds = append(holds, held{o, b.PerSend, o.spent.Plus(begins), "the send", "send " + o.name.Name})
	default:
		for _, r := range append([]*owner{o}, o.ancestors...) {
			holds = append(holds, held{r, b.PerRun, r.tree.Plus(begins), "the run tree of subagentrun/" + r.name.Name, "run tree " + r.name.Name})
		}
	}
	var ns string
	if b.Namespace != nil {
		ns = usage.NamespaceSpent(b.Namespace, l.windowLocked(c.Namespace, b.Namespace, pol.Status.Spend, now).spent, now)
	}
	l.mu.Unlock()
	for _, h := range holds {
		if err := l.judgeHeld(ctx, c, h); err != nil {
			return err
		}
	}
	if ns != "" {
		return Exceeded(ns)
	}
	return nil
}

// judgeHeld judges the call against one budget: its limit (what people approved beyond it
// added, when it may ask) narrowed by what it carried. At its limit, the policy decides
// whether the call fails or asks.
func (l *Ledger) judgeHeld(ctx context.Context, c Call, h held) error {
	limit := h.h.limit(h.def.Limits())
	why := usage.Exceeded(limit, h.spent, h.whose)
	if why == "" {
		return nil
	}
	if !h.def.Asks() || c.Purpose != PurposeTurn {
		return Exceeded(why)
	}
	limit = l.raisedLimit(ctx, c.Namespace, h.h, h.def)
	if why = usage.Exceeded(limit, h.spent, h.whose); why == "" {
		return nil
	}
	r, used, at, _ := usage.Over(limit, h.spent)
	in := policy.BudgetOver{Whose: h.short, Resource: r, Used: used, Limit: at, Base: usage.LimitOf(usage.EffectiveBudget(h.h.budget, h.def.Limits()), r), Currency: c.Currency,
		Exceeded: why, Policy: h.def, Carried: h.h.carried != nil && usage.Exceeded(*h.h.carried, h.spent, "") != ""}
	name := AskName(c.OwnerUID, h.h.uid, r, at)
	if !in.Carried {
		if in.Asked = l.asked(ctx, c.Namespace, name); in.Asked != nil && in.Asked.Spec.Budget == nil {
			in.Asked = nil
		}
	}
	v := policy.JudgeBudgetOver(in)
	if v.Fail != "" {
		return Exceeded(v.Fail)
	}
	ask := *v.Ask
	ask.BudgetOf = sessionsv1alpha1.ApprovalOwner{Kind: h.h.kind, Name: h.h.name.Name}
	return &AskError{Name: name, Holder: h.h.uid, Approval: ask, Timeout: v.Timeout, why: why}
}

// announceStep: the turn is an announce step (a send's or a run's, cancelled or not).
func announceStep(turnID string) bool {
	_, step, _ := strings.Cut(turnID, "/")
	return strings.HasPrefix(step, "announce")
}
