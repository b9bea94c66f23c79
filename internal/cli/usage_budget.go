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

package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// namespacePolicy is the namespace's SessionPolicy, or nil.
func namespacePolicy(ctx context.Context, cl client.Client, ns string) (*sessionsv1alpha1.SessionPolicy, error) {
	p := &sessionsv1alpha1.SessionPolicy{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return p, nil
}

func perRunBudget(p *sessionsv1alpha1.SessionPolicy) *sessionsv1alpha1.Budget {
	if p == nil || p.Spec.Budgets == nil {
		return nil
	}
	return p.Spec.Budgets.PerRun.Limits()
}

// budgetText is spent against each limit of b, e.g. "tokens 1200/2000 (60%), turns 4/200
// (2%)"; "-" when b bounds nothing.
func budgetText(b *sessionsv1alpha1.Budget, spent usage.Spent) string {
	if b == nil {
		return "-"
	}
	var parts []string
	if b.MaxCost != "" {
		limit, _ := usage.ParseNanos(b.MaxCost)
		parts = append(parts, fmt.Sprintf("cost %s/%s%s", usage.FormatNanos(spent.CostNanos), b.MaxCost, percent(spent.CostNanos, limit)))
	}
	if b.MaxTokens != nil {
		parts = append(parts, fmt.Sprintf("tokens %d/%d%s", spent.Tokens, *b.MaxTokens, percent(spent.Tokens, *b.MaxTokens)))
	}
	if b.MaxTurns != nil {
		parts = append(parts, fmt.Sprintf("turns %d/%d%s", spent.Turns, *b.MaxTurns, percent(spent.Turns, int64(*b.MaxTurns))))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func percent(n, of int64) string {
	if of <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%d%%)", n*100/of)
}

// printNamespaceBudget prints the namespace window's spend against its budget, when the
// SessionPolicy sets one, above the table.
func printNamespaceBudget(out io.Writer, p *sessionsv1alpha1.SessionPolicy, now time.Time) {
	if p == nil || p.Spec.Budgets == nil || p.Spec.Budgets.Namespace == nil {
		return
	}
	nb := p.Spec.Budgets.Namespace
	start := usage.WindowStart(now, nb.Window.Duration)
	text := budgetText(&sessionsv1alpha1.Budget{MaxCost: nb.MaxCost, MaxTokens: nb.MaxTokens}, usage.WindowSpent(nb, p.Status.Spend, now))
	fmt.Fprintf(out, "NAMESPACE BUDGET: %s in the %s window since %s (resets %s)\n", text, nb.Window.Duration,
		start.Format(time.RFC3339), start.Add(nb.Window.Duration).Format(time.RFC3339))
}
