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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// limit is the owner's budget: its spec.budget over def (the policy's perSend or perRun),
// narrowed by what it carried.
func (o *owner) limit(def *sessionsv1alpha1.Budget) sessionsv1alpha1.Budget {
	b := usage.EffectiveBudget(o.budget, def)
	if o.carried != nil {
		b = *usage.Narrow(&b, o.carried)
	}
	return b
}

// maxTreeDepth bounds the walk up a run tree (Agents allow a spawn depth of 5 at most).
const maxTreeDepth = 8

// owner is a send or run as budgets count it.
type owner struct {
	kind string
	uid  types.UID
	name types.NamespacedName
	// budget is its spec.budget (the policy's default fills the rest at each judge).
	budget *sessionsv1alpha1.Budget
	// carried is what is left of the budget above it on another agent server, when it
	// arrived through a door carrying the chain extension: it only narrows budget.
	carried *sessionsv1alpha1.Budget
	// spent is what its own turns used; tree adds the runs below it (runs only).
	spent, tree usage.Spent
	// ancestors are the runs whose trees hold this owner, nearest first.
	ancestors []*owner
	seen      time.Time
}

// turnSeen is a turn the ledger charged: it is counted once.
type turnSeen struct {
	seen time.Time
}

// ownerOf is the ledger's record of the call's send or run, nil for any other owner.
func (l *Ledger) ownerOf(ctx context.Context, c Call) *owner {
	if c.OwnerKind != OwnerSessionSend && c.OwnerKind != OwnerSubagentRun {
		return nil
	}
	return l.owner(ctx, c.OwnerKind, c.Owner, c.OwnerUID, 0)
}

// owner returns the ledger's record of a send or run, made at first sight from the object
// in the cache: its spec.budget, its status.usage (what it used before a restart) and, for
// a run, the runs whose trees hold it. nil when the object is gone.
func (l *Ledger) owner(ctx context.Context, kind string, name types.NamespacedName, uid types.UID, depth int) *owner {
	l.mu.Lock()
	o, ok := l.owners[uid]
	l.mu.Unlock()
	if ok {
		return o
	}
	var obj client.Object
	var budget *sessionsv1alpha1.Budget
	var recorded *sessionsv1alpha1.Usage
	var parent *owner
	switch kind {
	case OwnerSessionSend:
		s := &sessionsv1alpha1.SessionSend{}
		if err := l.cache.Cache.Get(ctx, name, s); err != nil {
			return nil
		}
		obj, budget, recorded = s, s.Spec.Budget, s.Status.Usage
	default:
		r := &sessionsv1alpha1.SubagentRun{}
		if err := l.cache.Cache.Get(ctx, name, r); err != nil {
			return nil
		}
		obj, budget, recorded = r, r.Spec.Budget, r.Status.Usage
		if depth < maxTreeDepth {
			parent = l.parentRun(ctx, r, depth)
		}
	}
	if obj.GetUID() != uid {
		return nil // another object of the same name
	}
	spent := usage.SpentOfUsage(recorded)
	o = &owner{kind: kind, uid: uid, name: name, budget: budget, spent: spent, tree: spent, seen: l.clock.Now()}
	if c, err := policy.CarriedOf(obj.GetAnnotations()); err == nil && c != nil {
		// The webhook refused a malformed one; what arrived counts from this owner's start.
		o.carried = c.Budget
	}
	if parent != nil {
		o.ancestors = append([]*owner{parent}, parent.ancestors...)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if have, ok := l.owners[uid]; ok {
		return have
	}
	l.owners[uid] = o
	return o
}

// parentRun is the run whose child session requested r (nil for a run a main or other
// session requested): the run tree of the parent holds r.
func (l *Ledger) parentRun(ctx context.Context, r *sessionsv1alpha1.SubagentRun, depth int) *owner {
	if r.Spec.RequesterSessionKey == "" {
		return nil
	}
	s, err := l.cache.SessionByKey(ctx, r.Namespace, r.Spec.RequesterSessionKey)
	if err != nil || s == nil {
		return nil
	}
	ref := metav1.GetControllerOf(s)
	if ref == nil || ref.Kind != "SubagentRun" {
		return nil
	}
	return l.owner(ctx, OwnerSubagentRun, types.NamespacedName{Namespace: r.Namespace, Name: ref.Name}, ref.UID, depth+1)
}
