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

package sessionsend

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
)

// SendTTL deletes finished SessionSends when their TTL has passed. The manager's cache holds
// no finished send (cacheindex.UnfinishedSends), so the send controller cannot wait for a
// TTL: it hands each send it finishes to schedule, and at start (a restart, a new leader)
// sweep schedules every finished send the API server has. A scheduled send waits in a
// delaying work queue (as jobset's TTL controller does) as a name and a UID, and the queue's
// de-duplication keeps a send scheduled twice (by the controller and the sweep) once.
type SendTTL struct {
	api   client.Reader // the API server, not the cache: finished sends are only there
	del   client.Writer
	clock clock.PassiveClock
	def   time.Duration
	owns  func(namespace string) bool
	queue workqueue.TypedDelayingInterface[ttlItem]
}

// ttlItem is one scheduled send. 100,000 finished sends are 100,000 items, so the item is
// 48 bytes: one namespace/name string, and the UID as the 16 bytes of its UUID rather than
// its 36-character string (rawUID holds a UID that is not a UUID: the API server never makes
// one). Waiting in the queue (its map key, its heap entry, the string) a send costs about
// 200 bytes (BenchmarkSendTTLBytes); a hand-rolled heap held at least 112.
type ttlItem struct {
	key    string    // namespace/name: one string, not two
	uid    uuid.UUID // zero when rawUID holds the UID
	rawUID types.UID
}

func newTTLItem(ns, name string, uid types.UID) ttlItem {
	item := ttlItem{key: ns + "/" + name}
	if u, err := uuid.Parse(string(uid)); err == nil && u.String() == string(uid) && u != (uuid.UUID{}) {
		item.uid = u
	} else {
		item.rawUID = uid
	}
	return item
}

// Key is the scheduled send's namespace and name (neither holds a slash).
func (i ttlItem) Key() types.NamespacedName {
	ns, name, _ := strings.Cut(i.key, "/")
	return types.NamespacedName{Namespace: ns, Name: name}
}

// UID is the scheduled send's UID.
func (i ttlItem) UID() types.UID {
	if i.uid == (uuid.UUID{}) {
		return i.rawUID
	}
	return types.UID(i.uid.String())
}

const (
	// sweepPage is the page size of the start sweep's lists.
	sweepPage = 500
	// ttlPoll is the longest the queue waits before it reads the clock again: a TTL ends at
	// most this late, however the clock jumps.
	ttlPoll = time.Second
	// ttlRetry is how soon a failed delete is tried again.
	ttlRetry = 10 * time.Second
	// ttlWorkers is how many deletes are in flight at once, as retention's.
	ttlWorkers = 8
)

// NewSendTTL reads due times from clk, and waits on real timers of at most ttlPoll (pollClock),
// so the schedule sets no timer on clk: a fake clock's waiters stay the turns'.
func NewSendTTL(api client.Reader, del client.Writer, clk clock.PassiveClock, def time.Duration, owns func(string) bool) *SendTTL {
	return newSendTTLOn(api, del, PollClock{clk}, def, owns)
}

// newSendTTLOn waits on the timers of clk itself (a unit test's fake clock).
func newSendTTLOn(api client.Reader, del client.Writer, clk clock.WithTicker, def time.Duration, owns func(string) bool) *SendTTL {
	return &SendTTL{api: api, del: del, clock: clk, def: def, owns: owns,
		queue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[ttlItem]{Clock: clk})}
}

// schedule queues the deletion of a finished send at its TTL; one kept forever is not queued.
func (t *SendTTL) schedule(s *sessionsv1alpha1.SessionSend) {
	left, keep := ownerflow.TTLLeft(s.Spec.TTLSecondsAfterFinished, t.def, s.Status.CompletedAt, nil, t.clock.Now())
	if keep || !t.owns(s.Namespace) {
		return
	}
	t.queue.AddAfter(newTTLItem(s.Namespace, s.Name, s.UID), left)
}

// Start sweeps, then deletes what falls due until ctx ends.
func (t *SendTTL) Start(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		t.queue.ShutDown()
	}()
	if err := t.sweep(ctx); err != nil {
		// A partial sweep leaves the rest for the next start; sends finished from now on
		// are scheduled as they finish.
		ctrl.LoggerFrom(ctx).Error(err, "listing finished SessionSends for their TTL")
	}
	// Deletes run ttlWorkers at a time: one at a time, a send finished every 25 ms outran
	// them on a loaded API server (27,000 finished sends waiting at 50,000 created).
	var wg sync.WaitGroup
	for range ttlWorkers {
		wg.Go(func() {
			for t.next(ctx) {
			}
		})
	}
	wg.Wait()
	return nil
}

// next deletes the next due send; false once the queue is shut down.
func (t *SendTTL) next(ctx context.Context) bool {
	item, shutdown := t.queue.Get()
	if shutdown {
		return false
	}
	defer t.queue.Done(item)
	t.delete(ctx, item)
	return true
}

// NeedLeaderElection: only the leader deletes.
func (t *SendTTL) NeedLeaderElection() bool { return true }

// sweep schedules every finished send, listed by phase a page at a time (status.phase is a
// selectable field of the CRD).
func (t *SendTTL) sweep(ctx context.Context) error {
	for _, phase := range []sessionsv1alpha1.SendPhase{sessionsv1alpha1.SendCompleted, sessionsv1alpha1.SendFailed, sessionsv1alpha1.SendCancelled} {
		opts := []client.ListOption{client.Limit(sweepPage),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector(cacheindex.SendPhaseField, string(phase))}}
		for cont := ""; ; {
			var page sessionsv1alpha1.SessionSendList
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
func (t *SendTTL) delete(ctx context.Context, item ttlItem) {
	key := item.Key()
	s := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	uid := item.UID()
	err := t.del.Delete(ctx, s, client.Preconditions{UID: &uid})
	switch {
	case err == nil:
		ctrl.LoggerFrom(ctx).V(2).Info("deleted after its TTL", "sessionSend", key)
	case apierrors.IsNotFound(err), apierrors.IsConflict(err): // gone, or another object by that name
	default:
		ctrl.LoggerFrom(ctx).Error(err, "deleting a SessionSend after its TTL", "sessionSend", key)
		t.queue.AddAfter(item, ttlRetry)
	}
}
