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
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Recency keeps each namespace's sessions in sessions_list's order (most recently updated
// first, then by key), fed by an informer's events. A page of 50 then walks the 50 newest
// sessions and those the filters skip, not the whole namespace: at 100,000 sessions a full
// walk touches 100,000 objects scattered over the heap on every call.
type Recency struct {
	mu     sync.Mutex
	byNS   map[string]*btree.BTreeG[recent]
	placed map[types.NamespacedName]recent
}

type recent struct {
	updated   int64
	key, name string
	s         *v1.AgentSession
}

func newerFirst(a, b recent) bool {
	if a.updated != b.updated {
		return a.updated > b.updated
	}
	if a.key != b.key {
		return a.key < b.key
	}
	return a.name < b.name
}

// NewRecency returns an empty Recency; feed it with Handler.
func NewRecency() *Recency {
	return &Recency{byNS: map[string]*btree.BTreeG[recent]{}, placed: map[types.NamespacedName]recent{}}
}

// put places s, replacing what was placed under its name. The informer's objects are never
// modified once stored, so the order key taken here stays the object's.
func (r *Recency) put(s *v1.AgentSession) {
	at := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
	e := recent{updated: updatedAt(s), key: s.Spec.Key, name: s.Name, s: s}
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.byNS[s.Namespace]
	if t == nil {
		t = btree.NewG(16, newerFirst)
		r.byNS[s.Namespace] = t
	}
	if old, ok := r.placed[at]; ok {
		t.Delete(old)
	}
	t.ReplaceOrInsert(e)
	r.placed[at] = e
}

func (r *Recency) remove(namespace, name string) {
	at := types.NamespacedName{Namespace: namespace, Name: name}
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.placed[at]
	if !ok {
		return
	}
	delete(r.placed, at)
	t := r.byNS[namespace]
	t.Delete(old)
	if t.Len() == 0 {
		delete(r.byNS, namespace)
	}
}

// Handler keeps r current from an AgentSession informer.
func (r *Recency) Handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if s, ok := o.(*v1.AgentSession); ok {
				r.put(s)
			}
		},
		UpdateFunc: func(_, o any) {
			if s, ok := o.(*v1.AgentSession); ok {
				r.put(s)
			}
		},
		DeleteFunc: func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if s, ok := o.(*v1.AgentSession); ok {
				r.remove(s.Namespace, s.Name)
			}
		},
	}
}

// Newest calls yield with namespace's sessions in sessions_list's order until it returns
// false. It walks a copy-on-write snapshot, so the informer is not held up meanwhile.
func (r *Recency) Newest(namespace string, yield func(*v1.AgentSession) bool) {
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
func PageRows(newest func(yield func(*v1.AgentSession) bool), p ListParams, now time.Time, visible func(*v1.AgentSession) bool) []SessionRow {
	rows := make([]SessionRow, 0, p.Limit)
	cutoff := activeCutoff(p, now)
	newest(func(s *v1.AgentSession) bool {
		if p.ActiveMinutes > 0 && updatedAt(s) < cutoff {
			return false // all the rest are older still
		}
		if _, ok := listed(s, p, cutoff, visible); ok {
			rows = append(rows, RowOf(s))
		}
		return len(rows) < p.Limit
	})
	return rows
}
