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
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// budgetIdle is how long the keeper remembers an owner or a turn it has not heard of: a
// send or run tree that went quiet that long counts again from its recorded usage.
const budgetIdle = time.Hour

// maxTreeDepth bounds the walk up a run tree (Agents allow a spawn depth of 5 at most).
const maxTreeDepth = 8

// budgetKeeper is the engine's BudgetCheck. Before each model call it adds what the turn
// used since its last call to its owner (a send, or a run and every run tree that holds it)
// and to the namespace's window, then judges the turn against their budgets. It learns a
// turn's last model call from the outcome the owner reads (see budgetRunner). Everything is
// in memory, seeded at first sight from what the API records: an owner's status.usage and
// the SessionPolicy's status.spend (which the SessionPolicy controller writes from here).
type budgetKeeper struct {
	lookup lookup.Lookup
	clock  clock.PassiveClock

	mu     sync.Mutex
	owners map[types.UID]*budgetOwner
	turns  map[string]*budgetTurn // by turn id
	spend  map[string]*windowSpend
	swept  time.Time
	// wake asks the SessionPolicy controller to write a namespace's spend.
	wake chan event.GenericEvent
}

// budgetOwner is a send or run as budgets count it.
type budgetOwner struct {
	kind string
	name types.NamespacedName
	// budget is its spec.budget (the policy's default fills the rest at each check).
	budget *v1.Budget
	// spent is what its own turns used; tree adds the runs below it (runs only).
	spent, tree usage.Spent
	// ancestors are the runs whose trees hold this owner, nearest first.
	ancestors []*budgetOwner
	seen      time.Time
}

type budgetTurn struct {
	owner *budgetOwner
	spent usage.Spent
	seen  time.Time
}

// windowSpend is the namespace's spend in its current window.
type windowSpend struct {
	start time.Time
	spent usage.Spent
	// awake: a wake is queued or the controller is writing while spend changes.
	awake bool
}

func newBudgetKeeper(l lookup.Lookup, clk clock.PassiveClock) *budgetKeeper {
	return &budgetKeeper{lookup: l, clock: clk, owners: map[types.UID]*budgetOwner{}, turns: map[string]*budgetTurn{},
		spend: map[string]*windowSpend{}, wake: make(chan event.GenericEvent, 1024)}
}

var _ turns.BudgetCheck = (*budgetKeeper)(nil)

// BeforeModelCall implements turns.BudgetCheck. An announce step is counted but never
// stopped: it is how the requester hears that a run stopped.
func (k *budgetKeeper) BeforeModelCall(ctx context.Context, req *turns.TurnRequest, used turns.TurnResult) error {
	pol, err := k.lookup.SessionPolicy(ctx, req.Namespace)
	if err != nil {
		return err
	}
	o := k.note(ctx, req.ID, req.Owner, used.Usage(), pol)
	if o == nil || announceStep(req.ID) {
		return nil
	}
	if why := k.judge(o, pol); why != "" {
		klog.FromContext(ctx).V(2).Info("turn stopped by a budget", "turn", req.ID, "why", why)
		return turns.BudgetExceeded(why)
	}
	return nil
}

// judge is why o's next model call is over a budget: its own, a tree's that holds it, or
// the namespace's window.
func (k *budgetKeeper) judge(o *budgetOwner, pol *v1.SessionPolicy) string {
	b := &v1.Budgets{}
	if pol != nil && pol.Spec.Budgets != nil {
		b = pol.Spec.Budgets
	}
	now := k.clock.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if o.kind == turns.OwnerSessionSend {
		if why := usage.Exceeded(usage.EffectiveBudget(o.budget, b.PerSend), o.spent, "the send"); why != "" {
			return why
		}
	} else {
		for _, r := range append([]*budgetOwner{o}, o.ancestors...) {
			whose := "the run tree of subagentrun/" + r.name.Name
			if why := usage.Exceeded(usage.EffectiveBudget(r.budget, b.PerRun), r.tree, whose); why != "" {
				return why
			}
		}
	}
	if b.Namespace == nil {
		return ""
	}
	return usage.NamespaceSpent(b.Namespace, k.windowLocked(pol.Namespace, b.Namespace, pol.Status.Spend, now).spent, now)
}

// announceStep: the turn is an announce step (a send's or a run's, cancelled or not).
func announceStep(turnID string) bool {
	_, step, _ := strings.Cut(turnID, "/")
	return strings.HasPrefix(step, "announce")
}

// note adds what the turn used since it was last heard of to its owner, the trees that hold
// it and the namespace's window, and returns the owner (nil when it is gone).
func (k *budgetKeeper) note(ctx context.Context, id string, owner turns.Owner, used usage.Turn, pol *v1.SessionPolicy) *budgetOwner {
	uid := turns.OwnerUIDOf(id)
	o := k.owner(ctx, owner.Kind, owner.NamespacedName, uid, 0)
	if o == nil {
		return nil
	}
	now := k.clock.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sweepLocked(now)
	t, ok := k.turns[id]
	if !ok {
		t = &budgetTurn{owner: o}
		k.turns[id] = t
	}
	total := usage.SpentOf(used)
	d := total.Minus(t.spent)
	d.Turns = 0
	if !ok && !announceStep(id) {
		d.Turns = 1
	}
	t.spent, t.seen, o.seen = total, now, now
	if d == (usage.Spent{}) {
		return o
	}
	o.spent, o.tree = o.spent.Plus(d), o.tree.Plus(d)
	for _, a := range o.ancestors {
		a.tree, a.seen = a.tree.Plus(d), now
	}
	if pol != nil && pol.Spec.Budgets != nil && pol.Spec.Budgets.Namespace != nil && (d.Tokens != 0 || d.CostNanos != 0) {
		w := k.windowLocked(owner.Namespace, pol.Spec.Budgets.Namespace, pol.Status.Spend, now)
		w.spent = w.spent.Plus(usage.Spent{Tokens: d.Tokens, CostNanos: d.CostNanos})
		k.wakeLocked(owner.Namespace, w)
	}
	return o
}

// windowLocked is the namespace's spend in the window that holds now, seeded at first sight
// from the recorded status.spend (a restarted manager goes on from it), empty when a new
// window began.
func (k *budgetKeeper) windowLocked(ns string, b *v1.NamespaceBudget, recorded *v1.Spend, now time.Time) *windowSpend {
	start := usage.WindowStart(now, b.Window.Duration)
	w, ok := k.spend[ns]
	if !ok {
		w = &windowSpend{start: start, spent: usage.WindowSpent(b, recorded, now)}
		k.spend[ns] = w
	}
	if !w.start.Equal(start) {
		w.start, w.spent = start, usage.Spent{}
	}
	return w
}

// wakeLocked asks the SessionPolicy controller to write the namespace's spend, unless it
// was asked already.
func (k *budgetKeeper) wakeLocked(ns string, w *windowSpend) {
	if w.awake {
		return
	}
	select {
	case k.wake <- event.GenericEvent{Object: &v1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}}:
		w.awake = true
	default: // full: the next change asks again
	}
}

// owner returns the keeper's record of a send or run, made at first sight from the object
// in the cache: its spec.budget, its status.usage (what it used before a restart) and, for a
// run, the runs whose trees hold it. nil when the object is gone.
func (k *budgetKeeper) owner(ctx context.Context, kind string, name types.NamespacedName, uid types.UID, depth int) *budgetOwner {
	k.mu.Lock()
	o, ok := k.owners[uid]
	k.mu.Unlock()
	if ok {
		return o
	}
	var obj client.Object
	var budget *v1.Budget
	var recorded *v1.Usage
	var parent *budgetOwner
	switch kind {
	case turns.OwnerSessionSend:
		s := &v1.SessionSend{}
		if err := k.lookup.Cache.Get(ctx, name, s); err != nil {
			return nil
		}
		obj, budget, recorded = s, s.Spec.Budget, s.Status.Usage
	default:
		r := &v1.SubagentRun{}
		if err := k.lookup.Cache.Get(ctx, name, r); err != nil {
			return nil
		}
		obj, budget, recorded = r, r.Spec.Budget, r.Status.Usage
		if depth < maxTreeDepth {
			parent = k.parentRun(ctx, r, depth)
		}
	}
	if obj.GetUID() != uid {
		return nil // another object of the same name
	}
	spent := usage.SpentOfUsage(recorded)
	o = &budgetOwner{kind: kind, name: name, budget: budget, spent: spent, tree: spent, seen: k.clock.Now()}
	if parent != nil {
		o.ancestors = append([]*budgetOwner{parent}, parent.ancestors...)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if have, ok := k.owners[uid]; ok {
		return have
	}
	k.owners[uid] = o
	return o
}

// parentRun is the run whose child session requested r (nil for a run a main or other
// session requested): the run tree of the parent holds r.
func (k *budgetKeeper) parentRun(ctx context.Context, r *v1.SubagentRun, depth int) *budgetOwner {
	if r.Spec.RequesterSessionKey == "" {
		return nil
	}
	s, err := k.lookup.SessionByKey(ctx, r.Namespace, r.Spec.RequesterSessionKey)
	if err != nil || s == nil {
		return nil
	}
	ref := metav1.GetControllerOf(s)
	if ref == nil || ref.Kind != "SubagentRun" {
		return nil
	}
	return k.owner(ctx, turns.OwnerSubagentRun, types.NamespacedName{Namespace: r.Namespace, Name: ref.Name}, ref.UID, depth+1)
}

// sweepLocked forgets, at most once a minute, owners and turns not heard of for budgetIdle.
func (k *budgetKeeper) sweepLocked(now time.Time) {
	if now.Sub(k.swept) < time.Minute {
		return
	}
	k.swept = now
	for id, t := range k.turns {
		if now.Sub(t.seen) > budgetIdle {
			delete(k.turns, id)
		}
	}
	for uid, o := range k.owners {
		if now.Sub(o.seen) > budgetIdle {
			delete(k.owners, uid)
		}
	}
}

// windowSpendOf is the namespace's spend to record in its SessionPolicy's status, and
// whether spend went on changing since the last call (the caller then looks again later).
func (k *budgetKeeper) windowSpendOf(p *v1.SessionPolicy) (*v1.Spend, bool) {
	if p.Spec.Budgets == nil || p.Spec.Budgets.Namespace == nil {
		return nil, false
	}
	now := k.clock.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	w := k.windowLocked(p.Namespace, p.Spec.Budgets.Namespace, p.Status.Spend, now)
	start := metav1.NewTime(w.start)
	s := &v1.Spend{WindowStart: &start, Tokens: w.spent.Tokens}
	if w.spent.CostNanos != 0 {
		s.Cost = usage.FormatNanos(w.spent.CostNanos)
	}
	changing := w.awake
	w.awake = false
	return s, changing
}

// rewake marks the namespace's spend as still to write (a write failed).
func (k *budgetKeeper) rewake(ns string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w, ok := k.spend[ns]; ok {
		w.awake = true
	}
}

// budgetRunner is the Runner the send and run controllers use: the engine, and each
// outcome they read also tells the keeper what the turn's last model call used.
type budgetRunner struct {
	turns.Runner
	keeper *budgetKeeper
}

// Result implements turns.Runner.
func (r budgetRunner) Result(owner turns.Owner, id string) (turns.TurnResult, bool) {
	res, ok := r.Runner.Result(owner, id)
	if ok {
		ctx := context.Background()
		pol, err := r.keeper.lookup.SessionPolicy(ctx, owner.Namespace)
		if err == nil {
			r.keeper.note(ctx, id, owner, res.Usage(), pol)
		}
	}
	return res, ok
}
