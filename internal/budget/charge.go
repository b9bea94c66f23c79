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

	"k8s.io/klog/v2"

	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// Charge implements Gate: it adds what the call received to its owner, the run trees that
// hold it and the namespace's window, and counts the call's turn once (announce steps
// aside). The SessionPolicy controller is woken to record the window.
func (l *Ledger) Charge(ctx context.Context, c Call, u usage.Turn) {
	pol, err := l.policy(ctx, c.Namespace)
	if err != nil {
		// The cache failed: the window cannot be found; the owner is still charged.
		klog.FromContext(ctx).V(2).Info("charging a model call without the namespace's policy", "turn", c.Turn, "error", err.Error())
	}
	o := l.ownerOf(ctx, c)
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepLocked(now)
	d := usage.SpentOf(u)
	if _, counted := l.turns[c.Turn]; !counted {
		if !announceStep(c.Turn) {
			d.Turns = 1
		}
	}
	l.turns[c.Turn] = &turnSeen{seen: now}
	if o != nil {
		o.spent, o.tree, o.seen = o.spent.Plus(d), o.tree.Plus(d), now
		for _, a := range o.ancestors {
			a.tree, a.seen = a.tree.Plus(d), now
		}
	}
	b := budgetsOf(pol)
	if b.Namespace == nil || (d.Tokens == 0 && d.CostNanos == 0) {
		return
	}
	w := l.windowLocked(c.Namespace, b.Namespace, pol.Status.Spend, now)
	w.spent = w.spent.Plus(usage.Spent{Tokens: d.Tokens, CostNanos: d.CostNanos})
	l.wakeLocked(c.Namespace, w)
}
