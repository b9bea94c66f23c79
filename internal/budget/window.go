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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// window is the namespace's spend in its current window.
type window struct {
	start time.Time
	spent usage.Spent
	// awake: a wake is queued, or spend changed since the controller last asked.
	awake bool
}

// windowLocked is the namespace's spend in the window that holds now, seeded at first sight
// from the recorded status.spend (a restarted manager goes on from it), empty when a new
// window began.
func (l *Ledger) windowLocked(ns string, b *sessionsv1alpha1.NamespaceBudget, recorded *sessionsv1alpha1.Spend, now time.Time) *window {
	start := usage.WindowStart(now, b.Window.Duration)
	w, ok := l.spend[ns]
	if !ok {
		w = &window{start: start, spent: usage.WindowSpent(b, recorded, now)}
		l.spend[ns] = w
	}
	if !w.start.Equal(start) {
		w.start, w.spent = start, usage.Spent{}
	}
	return w
}

// wakeLocked asks the SessionPolicy controller to record the namespace's spend, unless it
// was asked already.
func (l *Ledger) wakeLocked(ns string, w *window) {
	if w.awake {
		return
	}
	select {
	case l.wake <- event.GenericEvent{Object: &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: lookup.PolicyName}}}:
		w.awake = true
	default: // full: the next charge asks again
	}
}

// WindowSpend is the namespace's spend to record in p's status.spend (nil: p sets no
// namespace budget), and whether it changed since the last call. It sets the window's
// gauges.
func (l *Ledger) WindowSpend(p *sessionsv1alpha1.SessionPolicy) (*sessionsv1alpha1.Spend, bool) {
	if p.Spec.Budgets == nil || p.Spec.Budgets.Namespace == nil {
		export(p, nil)
		return nil, false
	}
	now := l.clock.Now()
	l.mu.Lock()
	w := l.windowLocked(p.Namespace, p.Spec.Budgets.Namespace, p.Status.Spend, now)
	start := metav1.NewTime(w.start)
	s := &sessionsv1alpha1.Spend{WindowStart: &start, Tokens: w.spent.Tokens}
	if w.spent.CostNanos != 0 {
		s.Cost = usage.FormatNanos(w.spent.CostNanos)
	}
	changing := w.awake
	w.awake = false
	l.mu.Unlock()
	export(p, s)
	return s, changing
}

// Rewake marks the namespace's spend as still to record (its write failed).
func (l *Ledger) Rewake(ns string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.spend[ns]; ok {
		w.awake = true
	}
}
