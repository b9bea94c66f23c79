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

package usage

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Spent is what a send, a run tree or a namespace's window used, as budgets count it:
// tokens are input plus output, Turns the turns begun (the one about to call its model
// included).
type Spent struct {
	Tokens, CostNanos, Turns int64
}

// Plus is s and o added up.
func (s Spent) Plus(o Spent) Spent {
	return Spent{Tokens: s.Tokens + o.Tokens, CostNanos: s.CostNanos + o.CostNanos, Turns: s.Turns + o.Turns}
}

// Minus is s less o.
func (s Spent) Minus(o Spent) Spent {
	return Spent{Tokens: s.Tokens - o.Tokens, CostNanos: s.CostNanos - o.CostNanos, Turns: s.Turns - o.Turns}
}

// SpentOf is a turn's usage as budgets count it (not a begun turn: Turns is 0).
func SpentOf(t Turn) Spent {
	return Spent{Tokens: t.Input + t.Output, CostNanos: t.CostNanos}
}

// SpentOfUsage is an object's recorded usage as budgets count it. A cost in more than one
// currency counts as none.
func SpentOfUsage(u *sessionsv1alpha1.Usage) Spent {
	if u == nil {
		return Spent{}
	}
	cost, _ := ParseNanos(u.Cost)
	return Spent{Tokens: u.InputTokens + u.OutputTokens, CostNanos: cost, Turns: u.Turns}
}

// EffectiveBudget is own's fields where set, else def's (the SessionPolicy's perSend or
// perRun). Either may be nil.
func EffectiveBudget(own, def *sessionsv1alpha1.Budget) sessionsv1alpha1.Budget {
	var b sessionsv1alpha1.Budget
	if def != nil {
		b = *def
	}
	if own == nil {
		return b
	}
	if own.MaxCost != "" {
		b.MaxCost = own.MaxCost
	}
	if own.MaxTokens != nil {
		b.MaxTokens = own.MaxTokens
	}
	if own.MaxTurns != nil {
		b.MaxTurns = own.MaxTurns
	}
	return b
}

// AbovePolicy is why own (a send's or run's spec.budget) asks more than the policy's
// ceiling (field is "perSend" or "perRun"), or "" when it does not. A field the policy does
// not bound may be anything.
func AbovePolicy(own, ceiling *sessionsv1alpha1.Budget, field string) string {
	if own == nil || ceiling == nil {
		return ""
	}
	var over []string
	if own.MaxCost != "" && ceiling.MaxCost != "" {
		o, _ := ParseNanos(own.MaxCost)
		c, _ := ParseNanos(ceiling.MaxCost)
		if o > c {
			over = append(over, fmt.Sprintf("maxCost %q is above %q", own.MaxCost, ceiling.MaxCost))
		}
	}
	if own.MaxTokens != nil && ceiling.MaxTokens != nil && *own.MaxTokens > *ceiling.MaxTokens {
		over = append(over, fmt.Sprintf("maxTokens %d is above %d", *own.MaxTokens, *ceiling.MaxTokens))
	}
	if own.MaxTurns != nil && ceiling.MaxTurns != nil && *own.MaxTurns > *ceiling.MaxTurns {
		over = append(over, fmt.Sprintf("maxTurns %d is above %d", *own.MaxTurns, *ceiling.MaxTurns))
	}
	if len(over) == 0 {
		return ""
	}
	return fmt.Sprintf("budget above the policy: spec.budget %s, the most SessionPolicy spec.budgets.%s allows; lower spec.budget or ask a namespace admin to raise the policy",
		strings.Join(over, ", "), field)
}

// The words a budget stop's reason begins with: a run a budget stopped keeps the reason in
// status.notes until its announce and its Failed condition (reason BudgetExceeded) are
// written, and StopReason tells it from any other failure by them.
const (
	exceededPrefix = "budget exceeded: "
	spentPrefix    = "namespace budget spent: "
)

// StopReason says whether why is a reason Exceeded or NamespaceSpent gave.
func StopReason(why string) bool {
	return strings.HasPrefix(why, exceededPrefix) || strings.HasPrefix(why, spentPrefix)
}

// Exceeded is why spent is over b ("" when it is not): a cost or token count that reached
// its limit, or more turns begun than maxTurns. whose names what b bounds, e.g. "the send"
// or "the run tree of subagentrun/a". A cost in another currency than the limit's is not
// compared (the budget is in the Agents' one currency).
func Exceeded(b sessionsv1alpha1.Budget, spent Spent, whose string) string {
	r, _, _, over := Over(b, spent)
	switch {
	case !over:
		return ""
	case r == sessionsv1alpha1.BudgetCost:
		return fmt.Sprintf(exceededPrefix+"%s cost %s of its maxCost %q", whose, FormatNanos(spent.CostNanos), b.MaxCost)
	case r == sessionsv1alpha1.BudgetTokens:
		return fmt.Sprintf(exceededPrefix+"%s used %d tokens of its maxTokens %d", whose, spent.Tokens, *b.MaxTokens)
	default:
		return fmt.Sprintf(exceededPrefix+"%s would begin turn %d, over its maxTurns %d", whose, spent.Turns, *b.MaxTurns)
	}
}

// Over is the first limit of b that spent reached, in Exceeded's order: its resource, what
// was used of it and the limit, in the resource's unit (cost in nano-units; turns are those
// begun before the one about to begin); over is false when spent is within b.
func Over(b sessionsv1alpha1.Budget, spent Spent) (r sessionsv1alpha1.BudgetResource, used, limit int64, over bool) {
	if b.MaxCost != "" {
		if limit, err := ParseNanos(b.MaxCost); err == nil && spent.CostNanos >= limit {
			return sessionsv1alpha1.BudgetCost, spent.CostNanos, limit, true
		}
	}
	if b.MaxTokens != nil && spent.Tokens >= *b.MaxTokens {
		return sessionsv1alpha1.BudgetTokens, spent.Tokens, *b.MaxTokens, true
	}
	if b.MaxTurns != nil && spent.Turns > int64(*b.MaxTurns) {
		return sessionsv1alpha1.BudgetTurns, spent.Turns - 1, int64(*b.MaxTurns), true
	}
	return "", 0, 0, false
}

// Of is the amount of resource r in s (cost in nano-units).
func (s Spent) Of(r sessionsv1alpha1.BudgetResource) int64 {
	switch r {
	case sessionsv1alpha1.BudgetCost:
		return s.CostNanos
	case sessionsv1alpha1.BudgetTokens:
		return s.Tokens
	default:
		return s.Turns
	}
}

// LimitOf is b's limit of resource r in its unit (cost in nano-units); 0 when b sets none.
func LimitOf(b sessionsv1alpha1.Budget, r sessionsv1alpha1.BudgetResource) int64 {
	switch {
	case r == sessionsv1alpha1.BudgetCost:
		n, _ := ParseNanos(b.MaxCost)
		return n
	case r == sessionsv1alpha1.BudgetTokens && b.MaxTokens != nil:
		return *b.MaxTokens
	case r == sessionsv1alpha1.BudgetTurns && b.MaxTurns != nil:
		return int64(*b.MaxTurns)
	}
	return 0
}

// Grant is more of resource r as a Spent (cost in nano-units).
func Grant(r sessionsv1alpha1.BudgetResource, more int64) Spent {
	switch r {
	case sessionsv1alpha1.BudgetCost:
		return Spent{CostNanos: more}
	case sessionsv1alpha1.BudgetTokens:
		return Spent{Tokens: more}
	default:
		return Spent{Turns: more}
	}
}

// ParseAmount reads an amount of resource r as a ToolApproval's spec.budget writes it: a
// decimal for cost (in nano-units), a whole number for tokens and turns.
func ParseAmount(r sessionsv1alpha1.BudgetResource, s string) (int64, error) {
	if r == sessionsv1alpha1.BudgetCost {
		return ParseNanos(s)
	}
	return strconv.ParseInt(s, 10, 64)
}

// Raise is b with more added to each limit b sets (what people approved beyond it); a
// limit b does not set stays unset.
func Raise(b sessionsv1alpha1.Budget, more Spent) sessionsv1alpha1.Budget {
	if more.CostNanos > 0 && b.MaxCost != "" {
		if n, err := ParseNanos(b.MaxCost); err == nil {
			b.MaxCost = FormatNanos(n + more.CostNanos)
		}
	}
	if more.Tokens > 0 && b.MaxTokens != nil {
		b.MaxTokens = ptr.To(*b.MaxTokens + more.Tokens)
	}
	if more.Turns > 0 && b.MaxTurns != nil {
		b.MaxTurns = ptr.To(int32(min(int64(*b.MaxTurns)+more.Turns, 1<<31-1)))
	}
	return b
}

// WindowStart is the start of the budget window holding now: windows are aligned on
// multiples of their length since the Unix epoch, so a 24h window resets at 00:00 UTC and
// a restarted manager finds the same window.
func WindowStart(now time.Time, window time.Duration) time.Time {
	if window <= 0 {
		return time.Time{}
	}
	n := now.UnixNano()
	return time.Unix(0, n-n%int64(window)).UTC()
}

// WindowSpent is what spend holds for the window that holds now: nothing when spend is of
// an earlier window.
func WindowSpent(b *sessionsv1alpha1.NamespaceBudget, spend *sessionsv1alpha1.Spend, now time.Time) Spent {
	if b == nil || spend == nil || spend.WindowStart == nil ||
		!spend.WindowStart.Time.Equal(WindowStart(now, b.Window.Duration)) {
		return Spent{}
	}
	cost, _ := ParseNanos(spend.Cost)
	return Spent{Tokens: spend.Tokens, CostNanos: cost}
}

// NamespaceSpent is why the namespace may start no more work in this window ("" when it
// may): its spend reached maxCost or maxTokens of b. The words say what was spent, the
// limit as the policy writes it, and when the window resets.
func NamespaceSpent(b *sessionsv1alpha1.NamespaceBudget, spent Spent, now time.Time) string {
	if b == nil {
		return ""
	}
	start := WindowStart(now, b.Window.Duration)
	what := ""
	if b.MaxCost != "" {
		if limit, err := ParseNanos(b.MaxCost); err == nil && spent.CostNanos >= limit {
			what = fmt.Sprintf("cost %s of its maxCost %q", FormatNanos(spent.CostNanos), b.MaxCost)
		}
	}
	if what == "" && b.MaxTokens != nil && spent.Tokens >= *b.MaxTokens {
		what = "used " + strconv.FormatInt(spent.Tokens, 10) + " tokens of its maxTokens " + strconv.FormatInt(*b.MaxTokens, 10)
	}
	if what == "" {
		return ""
	}
	return fmt.Sprintf(spentPrefix+"the namespace's turns %s in the %s window since %s (SessionPolicy spec.budgets.namespace); the window resets at %s",
		what, b.Window.Duration, start.Format(time.RFC3339), start.Add(b.Window.Duration).Format(time.RFC3339))
}

// Left is what b leaves after spent, field by field (never below zero); nil when b bounds
// nothing. It is what a send made now may carry to another agent server as its budget.
func Left(b sessionsv1alpha1.Budget, spent Spent) *sessionsv1alpha1.Budget {
	if b.MaxCost == "" && b.MaxTokens == nil && b.MaxTurns == nil {
		return nil
	}
	var out sessionsv1alpha1.Budget
	if b.MaxCost != "" {
		if limit, err := ParseNanos(b.MaxCost); err == nil {
			out.MaxCost = FormatNanos(max(0, limit-spent.CostNanos))
		}
	}
	if b.MaxTokens != nil {
		out.MaxTokens = ptr.To(max(0, *b.MaxTokens-spent.Tokens))
	}
	if b.MaxTurns != nil {
		out.MaxTurns = ptr.To(int32(max(0, int64(*b.MaxTurns)-spent.Turns)))
	}
	return &out
}

// Narrow is the tighter of budgets a and b, field by field; nil when both are nil.
func Narrow(a, b *sessionsv1alpha1.Budget) *sessionsv1alpha1.Budget {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := *a
	if b.MaxCost != "" {
		bn, _ := ParseNanos(b.MaxCost)
		if an, err := ParseNanos(a.MaxCost); a.MaxCost == "" || err != nil || bn < an {
			out.MaxCost = b.MaxCost
		}
	}
	if b.MaxTokens != nil && (a.MaxTokens == nil || *b.MaxTokens < *a.MaxTokens) {
		out.MaxTokens = b.MaxTokens
	}
	if b.MaxTurns != nil && (a.MaxTurns == nil || *b.MaxTurns < *a.MaxTurns) {
		out.MaxTurns = b.MaxTurns
	}
	return &out
}
