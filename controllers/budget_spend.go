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

package controllers

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// SpendWriteInterval is how often at most a namespace's SessionPolicy status.spend is
// written while its turns spend: the webhook reads it, so a new send sees a spent window
// within that long; running turns are judged on the keeper's own count at once.
const SpendWriteInterval = 5 * time.Second

// spendWriter writes the budget keeper's window spend into SessionPolicy status.spend, at
// most once per SpendWriteInterval per namespace (on the real clock: it bounds API writes).
type spendWriter struct {
	keeper *budgetKeeper
	clock  clock.PassiveClock

	mu      sync.Mutex
	written map[string]time.Time
}

func newSpendWriter(k *budgetKeeper) *spendWriter {
	return &spendWriter{keeper: k, clock: clock.RealClock{}, written: map[string]time.Time{}}
}

// record writes p's spend when it changed, and says when to look again (0: when woken).
func (w *spendWriter) record(ctx context.Context, c client.Client, p *v1.SessionPolicy) (time.Duration, error) {
	if w == nil {
		return 0, nil
	}
	now := w.clock.Now()
	w.mu.Lock()
	last := w.written[p.Namespace]
	w.mu.Unlock()
	if wait := last.Add(SpendWriteInterval).Sub(now); wait > 0 {
		return wait, nil // the keeper stays awake: no wake is queued meanwhile
	}
	s, _ := w.keeper.windowSpendOf(p)
	exportSpend(p, s)
	if s == nil || equality.Semantic.DeepEqual(p.Status.Spend, s) {
		return 0, nil
	}
	p.Status.Spend = s
	if err := c.Status().Update(ctx, p); err != nil {
		w.keeper.rewake(p.Namespace)
		return 0, err
	}
	w.mu.Lock()
	w.written[p.Namespace] = now
	w.mu.Unlock()
	return 0, nil
}

// exportSpend sets the budget window gauges of p's namespace (s nil: it has no budget).
func exportSpend(p *v1.SessionPolicy, s *v1.Spend) {
	ns := p.Namespace
	if s == nil {
		turns.BudgetWindowSpend.DeletePartialMatch(prometheus.Labels{"namespace": ns})
		turns.BudgetWindowLimit.DeletePartialMatch(prometheus.Labels{"namespace": ns})
		return
	}
	b := p.Spec.Budgets.Namespace
	cost, _ := usage.ParseNanos(s.Cost)
	turns.BudgetWindowSpend.WithLabelValues(ns, "cost").Set(float64(cost) / 1e9)
	turns.BudgetWindowSpend.WithLabelValues(ns, "tokens").Set(float64(s.Tokens))
	if limit, err := usage.ParseNanos(b.MaxCost); err == nil && b.MaxCost != "" {
		turns.BudgetWindowLimit.WithLabelValues(ns, "cost").Set(float64(limit) / 1e9)
	} else {
		turns.BudgetWindowLimit.DeleteLabelValues(ns, "cost")
	}
	if b.MaxTokens != nil {
		turns.BudgetWindowLimit.WithLabelValues(ns, "tokens").Set(float64(*b.MaxTokens))
	} else {
		turns.BudgetWindowLimit.DeleteLabelValues(ns, "tokens")
	}
}
