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

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// Remaining implements Gate: what is left, field by field, of the tightest budget that
// holds the call's send or run (its own, each run tree above it, what it carried), so that
// work it asks of another agent server is bounded by it. nil when nothing bounds it. The
// namespace's window is not carried: it is this namespace's, not the chain's.
func (l *Ledger) Remaining(ctx context.Context, c Call) *sessionsv1alpha1.Budget {
	pol, err := l.policy(ctx, c.Namespace)
	if err != nil {
		return nil
	}
	o := l.ownerOf(ctx, c)
	if o == nil {
		return nil
	}
	b := budgetsOf(pol)
	var holds []*owner
	def := b.PerRun
	if o.kind == OwnerSessionSend {
		holds, def = []*owner{o}, b.PerSend
	} else {
		holds = append([]*owner{o}, o.ancestors...)
	}
	limits := make([]sessionsv1alpha1.Budget, len(holds))
	for i, h := range holds {
		limits[i] = l.raisedLimit(ctx, c.Namespace, h, def)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if o.kind == OwnerSessionSend {
		return usage.Left(limits[0], o.spent)
	}
	var left *sessionsv1alpha1.Budget
	for i, r := range holds {
		left = usage.Narrow(left, usage.Left(limits[i], r.tree))
	}
	return left
}
