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

// Package budget holds the one budget capability of the manager: the Ledger that judges
// every model call before it is made and charges what the call received after (a send's
// budget, each run tree that holds a run, the namespace's window), the gauges of the window,
// and the admission check the webhook asks for new sends and runs. cmd/manager builds one
// Ledger and gives it to the turn engine (which judges and charges) and the controllers
// (the SessionPolicy controller records the window in its status) at construction.
//
// The rule is judge, then charge: nothing calls a model without asking Judge first, and
// every call that was made is told to Charge, whatever it was for (a turn, a compaction
// step, any summary). The ledger is in memory, seeded at first sight from what the API
// records (an owner's status.usage, the SessionPolicy's status.spend), and reads only the
// manager's informer cache: a judge makes no API call.
package budget

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// The kinds of owner a Call names; any other kind (a session's own compaction step) is
// judged against the namespace's window only.
const (
	OwnerSessionSend = "SessionSend"
	OwnerSubagentRun = "SubagentRun"
)

// Purpose says what a model call is for.
type Purpose string

const (
	// PurposeTurn is a call of a turn's tool loop.
	PurposeTurn Purpose = "turn"
	// PurposeCompaction is a compaction step's summary call. It is refused under any spent
	// budget, even in an announce step: compaction is optional (the turn falls back to
	// truncation).
	PurposeCompaction Purpose = "compaction"
	// PurposeEmbedding is a recall's embeddings call (memory_search): judged like a model
	// call before it is made, charged its tokens after, and, like compaction, refused under
	// any spent budget even in an announce step.
	PurposeEmbedding Purpose = "embedding"
)

// Call is one model call as budgets see it.
type Call struct {
	Namespace string
	// Turn is the turn's id: a turn is counted once (maxTurns), at its first charged call.
	// Announce steps ("<uid>/announce...") are counted but never stopped.
	Turn string
	// OwnerKind, Owner and OwnerUID name the send or run the turn belongs to.
	OwnerKind string
	Owner     types.NamespacedName
	OwnerUID  types.UID
	Purpose   Purpose
	// Currency is the cost's, the turn's Agent's pricing: an ask about cost names it.
	Currency string
}

// Gate is what the turn engine asks before every model call and tells after it. *Ledger
// implements it.
type Gate interface {
	// Judge returns an error matching ErrExceeded when the call may not be made.
	Judge(ctx context.Context, c Call) error
	// Charge adds what the call received (zero when it failed) to the budgets that hold it.
	Charge(ctx context.Context, c Call, u usage.Turn)
	// Remaining is what is left of the budgets that hold the call's owner, for work it asks
	// of another agent server; nil when none bounds it.
	Remaining(ctx context.Context, c Call) *sessionsv1alpha1.Budget
}

// idle is how long the ledger remembers an owner or a turn it has not heard of: a send or
// run tree that went quiet that long counts again from its recorded usage.
const idle = time.Hour

// Ledger is the manager's one budget ledger. It is safe for concurrent use.
type Ledger struct {
	cache lookup.Lookup
	clock clock.PassiveClock

	mu     sync.Mutex
	owners map[types.UID]*owner
	turns  map[string]*turnSeen
	spend  map[string]*window
	swept  time.Time
	// wake asks the SessionPolicy controller to record a namespace's spend.
	wake chan event.GenericEvent
}

var _ Gate = (*Ledger)(nil)

// NewLedger returns an empty ledger that reads owners and SessionPolicies from cache (the
// manager's informer cache) and times windows with clk (nil: the real clock).
func NewLedger(cache client.Reader, clk clock.PassiveClock) *Ledger {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Ledger{cache: lookup.Lookup{Cache: cache}, clock: clk, owners: map[types.UID]*owner{},
		turns: map[string]*turnSeen{}, spend: map[string]*window{}, wake: make(chan event.GenericEvent, 1024)}
}

// Wakes announces namespaces whose window spend changed and is not recorded yet; the
// SessionPolicy controller watches it (source.Channel) and calls WindowSpend.
func (l *Ledger) Wakes() <-chan event.GenericEvent { return l.wake }

// policy is the namespace's SessionPolicy from the cache, nil when it has none. It is the
// cache's own object, not a copy (a judge and a charge each read it on a turn's hot path):
// the ledger only reads it.
func (l *Ledger) policy(ctx context.Context, ns string) (*sessionsv1alpha1.SessionPolicy, error) {
	p := &sessionsv1alpha1.SessionPolicy{}
	err := l.cache.Cache.Get(ctx, types.NamespacedName{Namespace: ns, Name: lookup.PolicyName}, p, client.UnsafeDisableDeepCopy)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return p, nil
}

// budgetsOf is pol's spec.budgets, empty when it has none.
func budgetsOf(pol *sessionsv1alpha1.SessionPolicy) *sessionsv1alpha1.Budgets {
	if pol == nil || pol.Spec.Budgets == nil {
		return &sessionsv1alpha1.Budgets{}
	}
	return pol.Spec.Budgets
}

// sweepLocked forgets, at most once a minute, owners and turns not heard of for idle.
func (l *Ledger) sweepLocked(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for id, t := range l.turns {
		if now.Sub(t.seen) > idle {
			delete(l.turns, id)
		}
	}
	for uid, o := range l.owners {
		if now.Sub(o.seen) > idle {
			delete(l.owners, uid)
		}
	}
}

// Spent is what the ledger counts of a send or a run tree now (tests and the console).
func (l *Ledger) Spent(uid types.UID) (own, tree usage.Spent, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.owners[uid]
	if !ok {
		return usage.Spent{}, usage.Spent{}, false
	}
	return o.spent, o.tree, true
}
