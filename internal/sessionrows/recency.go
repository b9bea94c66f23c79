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

package sessionrows

import (
	"sync"
	"time"

	"github.com/google/btree"
	toolscache "k8s.io/client-go/tools/cache"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Recency keeps each namespace's sessions in sessions_list's order (most recently updated
// first, then by key), fed by an informer's events. A page of 50 then walks the 50 newest
// sessions and those the filters skip, not the whole namespace: at 100,000 sessions a full
// walk touches 100,000 objects scattered over the heap on every call.
type Recency struct {
	mu   sync.Mutex
	byNS map[string]*btree.BTreeG[recent]
}

// recent is a session with its update time, taken once: the informer never modifies an
// object it stored, so the order of an entry never changes while it is placed.
type recent struct {
	updated int64
	s       *sessionsv1alpha1.AgentSession
}

func recentOf(s *sessionsv1alpha1.AgentSession) recent { return recent{updated: UpdatedAt(s), s: s} }

func newerFirst(a, b recent) bool {
	if a.updated != b.updated {
		return a.updated > b.updated
	}
	if a.s.Spec.Key != b.s.Spec.Key {
		return a.s.Spec.Key < b.s.Spec.Key
	}
	return a.s.Name < b.s.Name
}

// NewerFirst orders sessions as Recency keeps them (most recently updated first, then by
// key), for sorting a list that came without that order.
func NewerFirst(a, b *sessionsv1alpha1.AgentSession) int {
	switch x, y := recentOf(a), recentOf(b); {
	case newerFirst(x, y):
		return -1
	case newerFirst(y, x):
		return 1
	}
	return 0
}

// NewRecency returns an empty Recency; feed it with Handler.
func NewRecency() *Recency {
	return &Recency{byNS: map[string]*btree.BTreeG[recent]{}}
}

// replace takes old's entry out (old nil: none) and places s (nil: none). The informer hands
// over, as old, the object it stored before, which is the one placed then.
func (r *Recency) replace(old, s *sessionsv1alpha1.AgentSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old != nil {
		if t := r.byNS[old.Namespace]; t != nil {
			t.Delete(recentOf(old))
			if t.Len() == 0 {
				delete(r.byNS, old.Namespace)
			}
		}
	}
	if s != nil {
		t := r.byNS[s.Namespace]
		if t == nil {
			t = btree.NewG(16, newerFirst)
			r.byNS[s.Namespace] = t
		}
		t.ReplaceOrInsert(recentOf(s))
	}
}

// Handler keeps r current from an AgentSession informer.
func (r *Recency) Handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if s, ok := o.(*sessionsv1alpha1.AgentSession); ok {
				r.replace(nil, s)
			}
		},
		UpdateFunc: func(o, n any) {
			old, _ := o.(*sessionsv1alpha1.AgentSession)
			if s, ok := n.(*sessionsv1alpha1.AgentSession); ok {
				r.replace(old, s)
			}
		},
		DeleteFunc: func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if s, ok := o.(*sessionsv1alpha1.AgentSession); ok {
				r.replace(s, nil)
			}
		},
	}
}

// Newest calls yield with namespace's sessions in sessions_list's order until it returns
// false. It walks a copy-on-write snapshot, so the informer is not held up meanwhile.
func (r *Recency) Newest(namespace string, yield func(*sessionsv1alpha1.AgentSession) bool) {
	r.mu.Lock()
	t := r.byNS[namespace]
	if t != nil {
		t = t.Clone()
	}
	r.mu.Unlock()
	if t == nil {
		return
	}
	t.Ascend(func(e recent) bool { return yield(e.s) })
}

// PageRows is ListRows over sessions already in its order (Recency.Newest): it stops once
// the page is full, or at the first session older than activeMinutes.
func PageRows(newest func(yield func(*sessionsv1alpha1.AgentSession) bool), p ListParams, now time.Time, visible func(*sessionsv1alpha1.AgentSession) bool) []SessionRow {
	rows := make([]SessionRow, 0, p.Limit)
	cutoff := activeCutoff(p, now)
	newest(func(s *sessionsv1alpha1.AgentSession) bool {
		if p.ActiveMinutes > 0 && UpdatedAt(s) < cutoff {
			return false // all the rest are older still
		}
		if _, ok := listed(s, p, cutoff, visible); ok {
			rows = append(rows, RowOf(s))
		}
		return len(rows) < p.Limit
	})
	return rows
}
