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
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// A budget whose SessionPolicy says onExceeded: Ask does not stop a turn at its limit: the
// judge answers *AskError, the turn makes (or finds) the ToolApproval of kind Budget it
// names and waits on it as on a tool call's (internal/turns), and once a person approved
// it the ledger counts its spec.budget.more beyond the limit. Approvals are found by the
// label sessions.agents.dev/budget-of (the holder's UID) in the manager's cache, and only
// when a limit is reached: within it, a judge reads nothing more than before.

// AskError is a judge's answer to a turn's model call at a budget that asks: the turn waits
// on the ToolApproval Name (made from Approval when there is none yet).
type AskError struct {
	// Name is the ToolApproval's: one per send or run, budget and limit.
	Name string
	// Holder is the UID of the send or run whose budget it is (spec.budget.budgetOf).
	Holder   types.UID
	Approval sessionsv1alpha1.BudgetApproval
	// Timeout is how long a new ask waits for a decision.
	Timeout time.Duration
	why     string
}

func (e *AskError) Error() string { return e.why + "; asking: " + e.Approval.Message }

// AskName is the ToolApproval of the ask the send or run owner makes about the budget of
// holder at limit (of resource r): the same on every judge, so a repeated turn finds it.
func AskName(owner, holder types.UID, r sessionsv1alpha1.BudgetResource, limit int64) string {
	sum := sha256.Sum256([]byte("budget\x00" + string(owner) + "\x00" + string(holder) + "\x00" + string(r) + "\x00" + strconv.FormatInt(limit, 10)))
	return "tap-" + hex.EncodeToString(sum[:10])
}

// granted is what people approved beyond the budget of holder, added up: each approved
// ask raises the limit it was asked at to what was spent then plus its spec.budget.more
// (a model call's usage is charged after it, so work may be past its limit when it asks).
func (l *Ledger) granted(ctx context.Context, ns string, holder types.UID) usage.Spent {
	var list sessionsv1alpha1.ToolApprovalList
	if err := l.cache.Cache.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{sessionsv1alpha1.BudgetHolderLabel: string(holder)}); err != nil {
		return usage.Spent{}
	}
	var more usage.Spent
	for i := range list.Items {
		ta := &list.Items[i]
		if ta.Status.Phase != sessionsv1alpha1.ApprovalApproved || !ta.Spec.IsBudget() {
			continue
		}
		b := ta.Spec.Budget
		n, err1 := usage.ParseAmount(b.Resource, b.More)
		spent, err2 := usage.ParseAmount(b.Resource, b.Spent)
		limit, err3 := usage.ParseAmount(b.Resource, b.Limit)
		if err1 == nil && err2 == nil && err3 == nil && n > 0 {
			more = more.Plus(usage.Grant(b.Resource, max(0, spent-limit)+n))
		}
	}
	return more
}

// raisedLimit is the budget of h under def with what people approved beyond it (when def
// asks), narrowed by what h carried.
func (l *Ledger) raisedLimit(ctx context.Context, ns string, h *owner, def *sessionsv1alpha1.PolicyBudget) sessionsv1alpha1.Budget {
	if !def.Asks() {
		return h.limit(def.Limits())
	}
	own := usage.Raise(usage.EffectiveBudget(h.budget, def.Limits()), l.granted(ctx, ns, h.uid))
	return *usage.Narrow(&own, h.carried)
}

// asked is the ToolApproval name from the cache, nil when there is none.
func (l *Ledger) asked(ctx context.Context, ns, name string) *sessionsv1alpha1.ToolApproval {
	ta := &sessionsv1alpha1.ToolApproval{}
	if err := l.cache.Cache.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ta); err != nil {
		return nil
	}
	return ta
}
