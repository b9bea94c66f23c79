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
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
)

// sendTTL deletes finished SessionSends when their TTL has passed. The manager's cache holds
// no finished send (cacheindex.UnfinishedSends), so the send controller cannot wait for a
// TTL: it hands each send it finishes to schedule, and at start (a restart, a new leader)
// sweep schedules every finished send the API server has. A scheduled send is a name, a
// UID and a due time, about a tenth of the cached object it replaces.
//
// Due times come from the injected clock; a real ticker looks for due sends every ttlPoll,
// so the schedule sets no timer on that clock (a fake clock's waiters stay the turns').
type sendTTL struct {
	api   client.Reader // the API server, not the cache: finished sends are only there
	del   client.Writer
	clock clock.PassiveClock
	def   time.Duration
	owns  func(namespace string) bool

	mu  sync.Mutex
	due ttlHeap
}

// ttlItem is one scheduled send. 100,000 finished sends are 100,000 items, so the UID is
// kept as the 16 bytes of its UUID rather than its 36-character string (rawUID holds a UID
// that is not a UUID: the API server never makes one).
type ttlItem struct {
	types.NamespacedName
	uid    uuid.UUID // zero when rawUID holds the UID
	rawUID types.UID
	At     time.Time
}

func newTTLItem(ns, name string, uid types.UID, at time.Time) ttlItem {
	item := ttlItem{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}, At: at}
	if u, err := uuid.Parse(string(uid)); err == nil && u.String() == string(uid) && u != (uuid.UUID{}) {
		item.uid = u
	} else {
		item.rawUID = uid
	}
	return item
}

// UID is the scheduled send's UID.
func (i ttlItem) UID() types.UID {
	if i.uid == (uuid.UUID{}) {
		return i.rawUID
	}
	return types.UID(i.uid.String())
}

// ttlHeap orders scheduled sends by due time, soonest first.
type ttlHeap []ttlItem

func (h ttlHeap) Len() int           { return len(h) }
func (h ttlHeap) Less(i, j int) bool { return h[i].At.Before(h[j].At) }
func (h ttlHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ttlHeap) Push(x any)        { *h = append(*h, x.(ttlItem)) }
func (h *ttlHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

const (
	// sweepPage is the page size of the start sweep's lists.
	sweepPage = 500
	// ttlPoll is how often due sends are looked for: a TTL ends at most this late.
	ttlPoll = time.Second
	// ttlRetry is how soon a failed delete is tried again.
	ttlRetry = 10 * time.Second
)

func newSendTTL(api client.Reader, del client.Writer, clk clock.PassiveClock, def time.Duration, owns func(string) bool) *sendTTL {
	return &sendTTL{api: api, del: del, clock: clk, def: def, owns: owns}
}

// schedule queues the deletion of a finished send at its TTL; one kept forever is not queued.
func (t *sendTTL) schedule(s *v1.SessionSend) {
	now := t.clock.Now()
	left, keep := ttlLeft(s.Spec.TTLSecondsAfterFinished, t.def, s.Status.CompletedAt, nil, now)
	if keep || !t.owns(s.Namespace) {
		return
	}
	t.add(newTTLItem(s.Namespace, s.Name, s.UID, now.Add(left)))
}

func (t *sendTTL) add(item ttlItem) {
	t.mu.Lock()
	heap.Push(&t.due, item)
	t.mu.Unlock()
}

// popDue takes the soonest send if it is due.
func (t *sendTTL) popDue() (ttlItem, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.due) == 0 || t.due[0].At.After(t.clock.Now()) {
		return ttlItem{}, false
	}
	return heap.Pop(&t.due).(ttlItem), true
}

// Start sweeps, then deletes what falls due until ctx ends.
func (t *sendTTL) Start(ctx context.Context) error {
	if err := t.sweep(ctx); err != nil {
		// A partial sweep leaves the rest for the next start; sends finished from now on
		// are scheduled as they finish.
		ctrl.LoggerFrom(ctx).Error(err, "listing finished SessionSends for their TTL")
	}
	tick := time.NewTicker(ttlPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		for item, ok := t.popDue(); ok && ctx.Err() == nil; item, ok = t.popDue() {
			t.delete(ctx, item)
		}
	}
}

// NeedLeaderElection: only the leader deletes.
func (t *sendTTL) NeedLeaderElection() bool { return true }

// sweep schedules every finished send, listed by phase a page at a time (status.phase is a
// selectable field of the CRD).
func (t *sendTTL) sweep(ctx context.Context) error {
	for _, phase := range []v1.SendPhase{v1.SendCompleted, v1.SendFailed, v1.SendCancelled} {
		opts := []client.ListOption{client.Limit(sweepPage),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector(cacheindex.SendPhaseField, string(phase))}}
		for cont := ""; ; {
			var page v1.SessionSendList
			if err := t.api.List(ctx, &page, append(opts, client.Continue(cont))...); err != nil {
				return err
			}
			for i := range page.Items {
				if sendFinished(&page.Items[i]) {
					t.schedule(&page.Items[i])
				}
			}
			if cont = page.Continue; cont == "" {
				break
			}
		}
	}
	return nil
}

// delete removes the send if it is still the one scheduled (same UID). A send owns nothing,
// so no propagation policy: an orphaning delete would wait for the garbage collector.
func (t *sendTTL) delete(ctx context.Context, item ttlItem) {
	s := &v1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: item.Namespace, Name: item.Name}}
	uid := item.UID()
	err := t.del.Delete(ctx, s, client.Preconditions{UID: &uid})
	switch {
	case err == nil:
		ctrl.LoggerFrom(ctx).V(2).Info("deleted after its TTL", "sessionSend", item.NamespacedName)
	case apierrors.IsNotFound(err), apierrors.IsConflict(err): // gone, or another object by that name
	default:
		ctrl.LoggerFrom(ctx).Error(err, "deleting a SessionSend after its TTL", "sessionSend", item.NamespacedName)
		item.At = t.clock.Now().Add(ttlRetry)
		t.add(item)
	}
}
