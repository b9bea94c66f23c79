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
	"fmt"
	"strconv"
	"strings"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// BudgetOver is a send's or run tree's budget that its next model call would go over, as
// the budget ledger found it: the rule below says whether the work fails, as it always
// did, or asks a person for more (the SessionPolicy's budget says onExceeded: Ask).
type BudgetOver struct {
	// Whose names the budget as a person reads it: "send s1", "run tree r1".
	Whose string
	// Resource is the limit reached: cost, tokens or turns.
	Resource sessionsv1alpha1.BudgetResource
	// Used and Limit are in the resource's unit (cost in nano-units; turns are those begun
	// before the next); Limit includes what was approved before. Base is the budget's own
	// limit of the resource, before any approval: an ask allows half of it more.
	Used, Limit, Base int64
	// Currency is the cost's (the Agent's pricing).
	Currency string
	// Exceeded is the stop's reason as a budget without Ask gives it.
	Exceeded string
	// Policy is the SessionPolicy's perSend or perRun budget; nil when it sets none.
	Policy *sessionsv1alpha1.PolicyBudget
	// Carried: a limit the caller carried over A2A or MCP (the budget above this work on
	// another agent server) is reached too. No person here may raise it.
	Carried bool
	// Asked is this send's or run's ask at this limit, nil when it made none.
	Asked *sessionsv1alpha1.ToolApproval
}

// BudgetVerdict is what becomes of work at its budget: it fails (Fail, the reason its
// Failed condition and status give), or it waits on an ask (Ask: a new one to make, or the
// one it made and a person has not decided yet).
type BudgetVerdict struct {
	Fail string
	Ask  *sessionsv1alpha1.BudgetApproval
	// Timeout is how long a new ask waits for a decision.
	Timeout time.Duration
}

// JudgeBudgetOver decides work at its budget. A budget without onExceeded: Ask fails it, as
// does a limit a caller carried (another server's budget, which nobody here may raise). With
// Ask, the work waits on an ask for half the budget's own limit more than it spent (at least one unit):
// made once per send or run and limit, decided by a person; denied or expired, the work
// fails, the reason saying so.
func JudgeBudgetOver(o BudgetOver) BudgetVerdict {
	switch {
	case !o.Policy.Asks():
		return BudgetVerdict{Fail: o.Exceeded}
	case o.Carried:
		return BudgetVerdict{Fail: o.Exceeded + "; the limit reached is the budget the caller carried from another agent server, which no approval here raises"}
	}
	if a := o.Asked; a != nil {
		switch a.Status.Phase {
		case sessionsv1alpha1.ApprovalDenied:
			why := o.Exceeded + "; more was denied"
			if a.Status.DecidedBy != "" {
				why += " by " + a.Status.DecidedBy
			}
			if a.Spec.Reason != "" {
				why += ": " + a.Spec.Reason
			}
			return BudgetVerdict{Fail: why + " (toolapproval/" + a.Name + ")"}
		case sessionsv1alpha1.ApprovalExpired:
			return BudgetVerdict{Fail: o.Exceeded + "; nobody approved more in time (toolapproval/" + a.Name + " expired)"}
		}
		if a.Spec.Budget != nil {
			return BudgetVerdict{Ask: a.Spec.Budget} // pending, or approved and not counted yet
		}
	}
	more := max(1, (o.Base+1)/2)
	if o.Resource == sessionsv1alpha1.BudgetCost {
		more = max(1, o.Base/2)
	}
	spent, limit, grant := budgetAmount(o.Resource, o.Used), budgetAmount(o.Resource, o.Limit), budgetAmount(o.Resource, more)
	unit := string(o.Resource)
	if o.Resource == sessionsv1alpha1.BudgetCost {
		unit = o.Currency
	}
	msg := strings.TrimSpace(fmt.Sprintf("%s spent %s of %s %s", o.Whose, spent, limit, unit)) + "; approve to allow " + strings.TrimSpace(grant+" more")
	timeout := time.Duration(sessionsv1alpha1.DefaultApprovalTimeoutSeconds) * time.Second
	if s := o.Policy.AskTimeoutSeconds; s != nil {
		timeout = time.Duration(*s) * time.Second
	}
	return BudgetVerdict{Timeout: timeout, Ask: &sessionsv1alpha1.BudgetApproval{Resource: o.Resource, Spent: spent, Limit: limit,
		More: grant, Currency: currencyOf(o), Message: msg}}
}

func currencyOf(o BudgetOver) string {
	if o.Resource == sessionsv1alpha1.BudgetCost {
		return o.Currency
	}
	return ""
}

// budgetAmount writes an amount as an ask shows it: money with at least two decimals
// ("1.00", "0.075"), tokens and turns as whole numbers.
func budgetAmount(r sessionsv1alpha1.BudgetResource, n int64) string {
	if r != sessionsv1alpha1.BudgetCost {
		return strconv.FormatInt(n, 10)
	}
	const nanos = 1_000_000_000
	frac := strings.TrimRight(fmt.Sprintf("%09d", n%nanos), "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return strconv.FormatInt(n/nanos, 10) + "." + frac
}
