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

package sessionpolicy

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
)

// SpendWriteInterval is how often at most a namespace's SessionPolicy status.spend is
// written while its turns spend: the webhook reads it, so a new send sees a spent window
// within that long; running turns are judged on the ledger's own count at once.
const SpendWriteInterval = 5 * time.Second

// SpendWriter puts the budget ledger's window spend into SessionPolicy status.spend, at
// most once per SpendWriteInterval per namespace (on the real clock: it bounds API writes).
// The SessionPolicy reconcile writes it with the rest of the status.
type SpendWriter struct {
	ledger *budget.Ledger
	clock  clock.PassiveClock

	mu      sync.Mutex
	written map[string]time.Time
}

// NewSpendWriter is nil (nothing recorded) without a ledger.
func NewSpendWriter(l *budget.Ledger) *SpendWriter {
	if l == nil {
		return nil
	}
	return &SpendWriter{ledger: l, clock: clock.RealClock{}, written: map[string]time.Time{}}
}

// apply sets p's status.spend when it is due and changed (changed true: the caller writes
// the status, then calls recorded), or says when to look again (0: when woken).
func (w *SpendWriter) apply(p *sessionsv1alpha1.SessionPolicy) (time.Duration, bool) {
	if w == nil {
		return 0, false
	}
	w.mu.Lock()
	last := w.written[p.Namespace]
	w.mu.Unlock()
	if wait := last.Add(SpendWriteInterval).Sub(w.clock.Now()); wait > 0 {
		return wait, false // the ledger stays awake: no wake is queued meanwhile
	}
	s, _ := w.ledger.WindowSpend(p)
	if s == nil || equality.Semantic.DeepEqual(p.Status.Spend, s) {
		return 0, false
	}
	p.Status.Spend = s
	return 0, true
}

// recorded notes the outcome of the status write that carried the spend apply set.
func (w *SpendWriter) recorded(ns string, err error) {
	if err != nil {
		w.ledger.Rewake(ns)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.written[ns] = w.clock.Now()
}
